/**
 * A minimal MessagePack reader for dead-letter evidence packed into one value (SPEC §3.3:
 * the product writes a too-wide entry whole as `packed_original` with Redis's cmsgpack): nil,
 * booleans, integers, floats, str/bin (as bytes), arrays and maps — what cmsgpack emits for a Lua table.
 */
export type Packed = null | boolean | number | Buffer | Packed[] | Map<Packed, Packed>;

export function unpack(bytes: Buffer): Packed {
  let at = 0;
  const u8 = () => bytes[at++]!;
  const u16 = () => ((at += 2), bytes.readUInt16BE(at - 2));
  const u32 = () => ((at += 4), bytes.readUInt32BE(at - 4));
  const raw = (n: number) => ((at += n), bytes.subarray(at - n, at));
  const list = (n: number): Packed[] => Array.from({ length: n }, () => value());
  const map = (n: number): Map<Packed, Packed> => {
    const m = new Map<Packed, Packed>();
    for (let i = 0; i < n; i += 1) m.set(value(), value());
    return m;
  };
  function value(): Packed {
    const b = u8();
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if ((b & 0xf0) === 0x80) return map(b & 0x0f);
    if ((b & 0xf0) === 0x90) return list(b & 0x0f);
    if ((b & 0xe0) === 0xa0) return raw(b & 0x1f);
    switch (b) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: case 0xd9: return raw(u8());
      case 0xc5: case 0xda: return raw(u16());
      case 0xc6: case 0xdb: return raw(u32());
      case 0xca: return (at += 4), bytes.readFloatBE(at - 4);
      case 0xcb: return (at += 8), bytes.readDoubleBE(at - 8);
      case 0xcc: return u8();
      case 0xcd: return u16();
      case 0xce: return u32();
      case 0xcf: return (at += 8), Number(bytes.readBigUInt64BE(at - 8));
      case 0xd0: return (at += 1), bytes.readInt8(at - 1);
      case 0xd1: return (at += 2), bytes.readInt16BE(at - 2);
      case 0xd2: return (at += 4), bytes.readInt32BE(at - 4);
      case 0xd3: return (at += 8), Number(bytes.readBigInt64BE(at - 8));
      case 0xdc: return list(u16());
      case 0xdd: return list(u32());
      case 0xde: return map(u16());
      case 0xdf: return map(u32());
      default: throw new Error(`unsupported msgpack byte 0x${b.toString(16)}`);
    }
  }
  return value();
}

/**
 * The original field/value pairs from packed evidence: a flat array [f1, v1, f2, v2, …],
 * an array of pairs, or a Lua table packed as a map keyed 1..n. Undefined when the shape
 * is none of these.
 */
export function packedPairs(bytes: Buffer): Buffer[] | undefined {
  let value: Packed;
  try {
    value = unpack(bytes);
  } catch {
    return undefined;
  }
  if (value instanceof Map) value = [...value.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => v);
  if (!Array.isArray(value)) return undefined;
  const flat = value.every((v) => Array.isArray(v)) ? (value as Packed[][]).flat() : value;
  return flat.every((v) => Buffer.isBuffer(v)) ? (flat as Buffer[]) : undefined;
}
