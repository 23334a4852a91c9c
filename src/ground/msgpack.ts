/**
 * Reading the MessagePack that the Lua scripts write with cmsgpack: arrays, byte strings (str
 * or bin, as cmsgpack writes Lua strings), numbers (the integer and float formats), nil and
 * booleans. Maps and extension types are no value our scripts pack, so they read as malformed.
 * Every reader returns undefined on malformed or truncated input rather than throwing: callers
 * decide what an unreadable value means (the scripts treat one as empty).
 */

export class MsgpackReader {
  #offset = 0;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Every byte was read. */
  get done(): boolean {
    return this.#offset === this.#bytes.length;
  }

  /** A big-endian unsigned integer of `size` bytes, or undefined past the end. */
  uint(size: 1 | 2 | 4): number | undefined {
    if (this.#offset + size > this.#bytes.length) return undefined;
    const at = this.#offset;
    this.#offset += size;
    return size === 1 ? this.#view.getUint8(at) : size === 2 ? this.#view.getUint16(at) : this.#view.getUint32(at);
  }

  take(length: number): Uint8Array | undefined {
    if (this.#offset + length > this.#bytes.length) return undefined;
    const slice = this.#bytes.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return slice;
  }

  /** An 8-byte value after a number tag (u64, i64, f64), or undefined past the end. */
  wide(kind: 'u64' | 'i64' | 'f64'): number | undefined {
    if (this.#offset + 8 > this.#bytes.length) return undefined;
    const at = this.#offset;
    this.#offset += 8;
    if (kind === 'f64') return this.#view.getFloat64(at);
    return Number(kind === 'u64' ? this.#view.getBigUint64(at) : this.#view.getBigInt64(at));
  }

  /** A 4-byte float after its tag, or undefined past the end. */
  float32(): number | undefined {
    if (this.#offset + 4 > this.#bytes.length) return undefined;
    const at = this.#offset;
    this.#offset += 4;
    return this.#view.getFloat32(at);
  }
}

/** An array header's element count, or undefined for anything else. */
export function readArrayLength(reader: MsgpackReader): number | undefined {
  const tag = reader.uint(1);
  if (tag === undefined) return undefined;
  return arrayLengthAfter(reader, tag);
}

/** A byte string (str or bin), or undefined for anything else. */
export function readByteString(reader: MsgpackReader): Uint8Array | undefined {
  const tag = reader.uint(1);
  if (tag === undefined) return undefined;
  const length = byteLengthAfter(reader, tag);
  return length === undefined ? undefined : reader.take(length);
}

/** A number (any integer or float format), or undefined for anything else. */
export function readNumber(reader: MsgpackReader): number | undefined {
  const tag = reader.uint(1);
  if (tag === undefined) return undefined;
  return numberAfter(reader, tag);
}

/** Arrays nested deeper than this read as malformed: the scripts nest two, and a bound keeps a corrupt value off the stack's limit. */
const MAX_DEPTH = 16;

/** Steps over one value of the formats above, nested arrays included; false when malformed. */
export function skipValue(reader: MsgpackReader, depth = 0): boolean {
  const tag = reader.uint(1);
  if (tag === undefined) return false;
  if (tag === 0xc0 || tag === 0xc2 || tag === 0xc3) return true;
  const elements = arrayLengthAfter(reader, tag);
  if (elements !== undefined) {
    if (depth >= MAX_DEPTH) return false;
    for (let i = 0; i < elements; i += 1) if (!skipValue(reader, depth + 1)) return false;
    return true;
  }
  const length = byteLengthAfter(reader, tag);
  if (length !== undefined) return reader.take(length) !== undefined;
  return numberAfter(reader, tag) !== undefined;
}

function arrayLengthAfter(reader: MsgpackReader, tag: number): number | undefined {
  if (tag >= 0x90 && tag <= 0x9f) return tag & 0x0f;
  if (tag === 0xdc) return reader.uint(2);
  if (tag === 0xdd) return reader.uint(4);
  return undefined;
}

function byteLengthAfter(reader: MsgpackReader, tag: number): number | undefined {
  if (tag >= 0xa0 && tag <= 0xbf) return tag & 0x1f;
  if (tag === 0xd9 || tag === 0xc4) return reader.uint(1);
  if (tag === 0xda || tag === 0xc5) return reader.uint(2);
  if (tag === 0xdb || tag === 0xc6) return reader.uint(4);
  return undefined;
}

function numberAfter(reader: MsgpackReader, tag: number): number | undefined {
  if (tag <= 0x7f) return tag;
  if (tag >= 0xe0) return tag - 0x100;
  switch (tag) {
    case 0xcc:
      return reader.uint(1);
    case 0xcd:
      return reader.uint(2);
    case 0xce:
      return reader.uint(4);
    case 0xcf:
      return reader.wide('u64');
    case 0xd0:
      return signed(reader.uint(1), 8);
    case 0xd1:
      return signed(reader.uint(2), 16);
    case 0xd2:
      return signed(reader.uint(4), 32);
    case 0xd3:
      return reader.wide('i64');
    case 0xca:
      return reader.float32();
    case 0xcb:
      return reader.wide('f64');
    default:
      return undefined;
  }
}

function signed(value: number | undefined, bits: 8 | 16 | 32): number | undefined {
  if (value === undefined) return undefined;
  return value >= 2 ** (bits - 1) ? value - 2 ** bits : value;
}
