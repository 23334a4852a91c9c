/** Reading stream entries byte-exact through the admin client, for the signed-entry suites. */
import type { Redis } from 'ioredis';

export type StoredFields = Map<string, Buffer>;

/** Entries of a stream as [id, field → bytes], in stream order. */
export async function entriesOf(admin: Redis, stream: string): Promise<Array<[string, StoredFields]>> {
  const entries = await admin.xrangeBuffer(stream, '-', '+');
  return entries.map(([id, flat]) => {
    const fields: StoredFields = new Map();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!.toString(), flat[i + 1]!);
    return [id.toString(), fields];
  });
}

/** Appends fields (name → bytes or text) in the given order; returns the new entry id. */
export async function appendFields(admin: Redis, stream: string, fields: Iterable<[string, Buffer | string]>): Promise<string> {
  return (await admin.xadd(stream, '*', ...[...fields].flat())) as string;
}
