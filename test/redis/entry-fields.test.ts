/**
 * Entries read through a real claim — the fresh XREADGROUP and the XAUTOCLAIM inside
 * claim.lua, over each client — carry exactly the fields Redis stores (issue 15: the fields
 * are kept over the reply instead of copied into a Map): binary names and values, empty
 * values, a repeated name (last value wins, and the entry is marked), a name that is not
 * UTF-8 (kept apart as its exact bytes, and the entry marked, SPEC §3.4), and entries whose
 * names differ from their neighbours' (each entry its own names, none borrowed).
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import type { StreamEntry } from '../../src/entry/entry';
import { ensureGroup } from '../../src/consume/groups';
import { surrogateEscapedText } from '../../src/ground/text';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { claimOnce, fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';

const NAME_FF = Buffer.from([0xff, 0x00, 0xfe]);
const VALUE_BINARY = Buffer.from([0x00, 0xc3, 0x28, 0xff, 0x00]);

/** Field lists appended in order: neighbours alike, different, repeating, empty. */
const APPENDED: Array<Array<string | Buffer>> = [
  ['event', 'a', 'event_id', 'e1', 'payload', '{}'],
  ['event', 'b', 'event_id', 'e2', 'payload', '{"x":1}'],
  [NAME_FF, VALUE_BINARY, 'payload', ''],
  ['payload', 'first', 'event_id', 'e4', 'payload', 'last'],
  ['event', 'c', 'event_id', 'e5', 'payload', Buffer.alloc(0)],
  ['', 'empty name', 'sig', Buffer.from([0x80])],
];

/** The Map the fields stand for, from what Redis stores (last value of a repeated name; names as their exact bytes). */
async function storedFields(admin: Redis, stream: string): Promise<Map<string, Map<string, Uint8Array>>> {
  const stored = new Map<string, Map<string, Uint8Array>>();
  for (const [id, flat] of await admin.xrangeBuffer(stream, '-', '+')) {
    const fields = new Map<string, Uint8Array>();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(surrogateEscapedText(flat[i]!), Uint8Array.from(flat[i + 1]!));
    stored.set(id.toString(), fields);
  }
  return stored;
}

function expectFieldsOf(entries: readonly StreamEntry[], stored: Map<string, Map<string, Uint8Array>>): void {
  expect(entries.map((e) => e.id)).toEqual([...stored.keys()]);
  for (const entry of entries) {
    const expected = stored.get(entry.id)!;
    expect(entry.fields.size).toBe(expected.size);
    expect([...entry.fields].map(([name, value]) => [name, Uint8Array.from(value)])).toEqual([...expected]);
    for (const name of expected.keys()) expect(Uint8Array.from(entry.fields.get(name)!)).toEqual(expected.get(name));
    expect(entry.fields.get('absent')).toBeUndefined();
  }
  expect(entries.map((e) => e.repeatsFieldName === true)).toEqual(APPENDED.map((_, i) => i === 3));
  expect(entries.map((e) => e.fieldNameNotUtf8 === true)).toEqual(APPENDED.map((_, i) => i === 2));
}

describe.each(clientKinds)('entry fields read through a claim over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'fields');

  it('hands over exactly the stored fields, fresh and reclaimed', async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    for (const fields of APPENDED) await admin.xadd(stream, '*', ...fields);
    const stored = await storedFields(admin, stream);
    const config = parseConsumerConfig(fastConfig(stream));

    const fresh = await claimOnce(port, config, { fresh: 10, reclaim: 0 });
    expect(fresh.entries.every((e) => e.deliveries === 1 && !e.reclaimed)).toBe(true);
    expectFieldsOf(fresh.entries, stored);

    // Reclaimed at once: the entries are pending and idle for at least 0 ms.
    const reclaimed = await claimOnce(port, { ...config, minIdleMs: 0, retry: { ...config.retry, baseMs: 0 } }, { fresh: 10, reclaim: 10 });
    expect(reclaimed.reclaimed).toBe(APPENDED.length);
    expect(reclaimed.entries.every((e) => e.deliveries === 2 && e.reclaimed)).toBe(true);
    expectFieldsOf(reclaimed.entries, stored);
  });
});
