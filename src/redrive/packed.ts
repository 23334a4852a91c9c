/**
 * Reading `packed_original`: the whole source entry of a dead-letter record too wide to copy
 * field by field, packed by settle.lua as `cmsgpack.pack(flat field/value array)`.
 *
 * Only that one shape is accepted: a single MessagePack array of an even number (>= 2) of
 * byte strings (str or bin, as cmsgpack writes Lua strings), with nothing after it — the
 * same rule redrive.lua applies, so a record listed as readable is one redrive restores.
 * A full MessagePack library would accept maps, numbers and nesting that no record holds.
 */

import { MsgpackReader, readArrayLength, readByteString } from '../ground/msgpack';

export type PackedField = readonly [name: Uint8Array, value: Uint8Array];

/** The entry's fields in their original order (repeats kept), or undefined for any other value. */
export function unpackFields(packed: Uint8Array): PackedField[] | undefined {
  const reader = new MsgpackReader(packed);
  const count = readArrayLength(reader);
  if (count === undefined || count < 2 || count % 2 === 1) return undefined;
  const fields: PackedField[] = [];
  for (let i = 0; i < count; i += 2) {
    const name = readByteString(reader);
    const value = readByteString(reader);
    if (name === undefined || value === undefined) return undefined;
    fields.push([name, value]);
  }
  return reader.done ? fields : undefined;
}
