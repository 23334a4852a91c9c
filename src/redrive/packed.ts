/**
 * Reading `packed_original`: the whole source entry of a dead-letter record too wide to copy
 * field by field, packed by settle.lua as `cmsgpack.pack(flat field/value array)`.
 *
 * Only that one shape is accepted: a single MessagePack array of an even number (>= 2) of
 * byte strings (str or bin, as cmsgpack writes Lua strings), with nothing after it — the
 * same rule redrive.lua applies, so a record listed as readable is one redrive restores.
 * A full MessagePack library would accept maps, numbers and nesting that no record holds.
 */

export type PackedField = readonly [name: Uint8Array, value: Uint8Array];

class Reader {
  private offset = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get done(): boolean {
    return this.offset === this.bytes.length;
  }
  /** A big-endian unsigned integer of `size` bytes, or undefined past the end. */
  uint(size: 1 | 2 | 4): number | undefined {
    if (this.offset + size > this.bytes.length) return undefined;
    const value = size === 1 ? this.view.getUint8(this.offset) : size === 2 ? this.view.getUint16(this.offset) : this.view.getUint32(this.offset);
    this.offset += size;
    return value;
  }
  take(length: number): Uint8Array | undefined {
    if (this.offset + length > this.bytes.length) return undefined;
    const slice = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return slice;
  }
}

function arrayLength(reader: Reader): number | undefined {
  const tag = reader.uint(1);
  if (tag === undefined) return undefined;
  if (tag >= 0x90 && tag <= 0x9f) return tag & 0x0f;
  if (tag === 0xdc) return reader.uint(2);
  if (tag === 0xdd) return reader.uint(4);
  return undefined;
}

function byteString(reader: Reader): Uint8Array | undefined {
  const tag = reader.uint(1);
  if (tag === undefined) return undefined;
  let length: number | undefined;
  if (tag >= 0xa0 && tag <= 0xbf) length = tag & 0x1f;
  else if (tag === 0xd9 || tag === 0xc4) length = reader.uint(1);
  else if (tag === 0xda || tag === 0xc5) length = reader.uint(2);
  else if (tag === 0xdb || tag === 0xc6) length = reader.uint(4);
  return length === undefined ? undefined : reader.take(length);
}

/** The entry's fields in their original order (repeats kept), or undefined for any other value. */
export function unpackFields(packed: Uint8Array): PackedField[] | undefined {
  const reader = new Reader(packed);
  const count = arrayLength(reader);
  if (count === undefined || count < 2 || count % 2 === 1) return undefined;
  const fields: PackedField[] = [];
  for (let i = 0; i < count; i += 2) {
    const name = byteString(reader);
    const value = byteString(reader);
    if (name === undefined || value === undefined) return undefined;
    fields.push([name, value]);
  }
  return reader.done ? fields : undefined;
}
