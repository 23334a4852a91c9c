/**
 * Ordering key for saga entries: with concurrency > 1, entries of one saga instance still
 * run one at a time and in stream order. Reads only `instance_id`; an entry that does not
 * parse gets no key (it will be dead-lettered by the pipeline anyway).
 */
import { Fields, type StreamEntry } from '../entry/entry';
import { decodeUtf8Strict } from '../ground/text';

export function instanceOrderingKey(entry: StreamEntry): string | undefined {
  const payload = entry.fields.get(Fields.payload);
  if (payload === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(decodeUtf8Strict(payload));
    const instance = (value as { instance_id?: unknown } | null)?.instance_id;
    return typeof instance === 'string' ? instance : undefined;
  } catch {
    return undefined;
  }
}
