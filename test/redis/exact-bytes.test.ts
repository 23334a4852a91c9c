/**
 * SPEC §3.4 "Exact bytes", end to end on every client against a real Redis (issue 24 item
 * 6): field names and `event_id` are compared as the bytes Redis stores. A BOM is not
 * dropped (an id `\uFEFFdup-1` was acked as a duplicate of `dup-1`, its work never done; a
 * field `\uFEFFpayload` was read as `payload`), and malformed bytes are not merged into
 * U+FFFD (two different names that are not UTF-8 looked like one repeated name). An id that
 * is not 1..=256 printable ASCII bytes is `event_id_invalid`; a name that is not UTF-8
 * makes the entry `entry_malformed`.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller, type Poller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import type { RedisPort } from '../../src/redis/port';
import { createCommandConsumer } from '../../src/saga/command-consumer';
import { clientKinds } from '../support/clients';
import { claimOnce, fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { dltRecords, pendingIds } from '../support/redis';
import { command, handSigned, ROUTE } from './saga-fixtures';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const withBom = (text: string) => Buffer.concat([BOM, Buffer.from(text)]);

type Field = [name: string | Buffer, value: string | Buffer];

describe.each(clientKinds)('exact bytes of field names and event ids over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  /** What the handler saw, in order: event id and payload text. */
  let seen: Array<[eventId: string, payload: string]>;
  let poller: Poller;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'exact');
  beforeEach(async () => {
    seen = [];
    // An inbox keyed by the event id it is handed: a second delivery of an id is a duplicate.
    const inbox = new Set<string>();
    poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createProcessor(rawPayload, ({ eventId, payload }) => {
        if (inbox.has(eventId)) return 'duplicate';
        inbox.add(eventId);
        seen.push([eventId, Buffer.from(payload).toString()]);
        return 'committed';
      }),
    });
    await poller.ensureGroup();
  });

  const append = async (...fields: Field[]) => (await admin.xadd(stream, '*', ...fields.flat())) as string;
  const runOnce = () => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });

  /** DLT records as name → bytes, keyed by source entry id. */
  async function deadLettered(dlt: string): Promise<Map<string, Map<string, Buffer>>> {
    const records = new Map<string, Map<string, Buffer>>();
    for (const [, flat] of await admin.xrangeBuffer(dlt, '-', '+')) {
      const record = new Map<string, Buffer>();
      for (let i = 0; i + 1 < flat.length; i += 2) record.set(flat[i]!.toString('latin1'), flat[i + 1]!);
      records.set(record.get('source_entry_id')!.toString(), record);
    }
    return records;
  }

  it('does not take an event id with a BOM for the id without it: it is event_id_invalid, never a duplicate', async () => {
    await append(['event_id', 'dup-1'], ['payload', 'first']);
    const forged = await append(['event_id', withBom('dup-1')], ['payload', 'second']);
    const report = await runOnce();
    expect(seen).toEqual([['dup-1', 'first']]);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, retained: 0 });
    const records = await deadLettered(poller.config.keys.dlt);
    expect([...records.keys()]).toEqual([forged]);
    const record = records.get(forged)!;
    expect(record.get('reason')!.toString()).toBe('event_id_invalid');
    // The record names the event by its own bytes, not by the id it was mistaken for.
    expect(record.get('event_id')).toEqual(withBom('dup-1'));
    expect(record.get('orig_event_id')).toEqual(withBom('dup-1'));
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it.each<[string, Buffer]>([
    ['a BOM before a valid id', withBom('e-1')],
    ['259 bytes a lenient decoder reads as 256 characters', withBom('a'.repeat(256))],
    ['a BOM alone', BOM],
    ['257 printable bytes', Buffer.from('a'.repeat(257))],
    ['a non-ASCII character', Buffer.from('é-1')],
    ['a replacement character', Buffer.from('e-\ufffd')],
    ['a byte that is not UTF-8', Buffer.from([0x65, 0x2d, 0xff])],
    ['a control character', Buffer.from('e\t1')],
    ['a space', Buffer.from('e 1')],
  ])('dead-letters an event id with %s as event_id_invalid, and handles a 256-byte id beside it', async (_, eventId) => {
    const invalid = await append(['event_id', eventId], ['payload', 'x']);
    await append(['event_id', 'b'.repeat(256)], ['payload', 'y']);
    const report = await runOnce();
    expect(seen).toEqual([['b'.repeat(256), 'y']]);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1 });
    const record = (await deadLettered(poller.config.keys.dlt)).get(invalid)!;
    expect(record.get('reason')!.toString()).toBe('event_id_invalid');
    expect(record.get('orig_event_id')).toEqual(eventId);
  });

  it('does not read a field "\\uFEFFpayload" as payload, nor merge it with payload', async () => {
    const bomOnly = await append(['event_id', 'e-bom-only'], [withBom('payload'), 'read as payload']);
    await append(['event_id', 'e-both'], ['payload', 'the payload'], [withBom('payload'), 'another field']);
    const report = await runOnce();
    expect(seen).toEqual([['e-both', 'the payload']]);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1 });
    expect((await deadLettered(poller.config.keys.dlt)).get(bomOnly)!.get('reason')!.toString()).toBe('payload_missing');
  });

  it('dead-letters an entry with a field name that is not UTF-8 as entry_malformed, keeping the name exactly', async () => {
    const name = Buffer.from([0x6e, 0xff]);
    const malformed = await append(['event_id', 'e-ff'], ['payload', 'x'], [name, 'v']);
    await append(['event_id', 'e-fine'], ['payload', 'y'], ['\ufffd', 'a valid name']);
    const report = await runOnce();
    expect(seen).toEqual([['e-fine', 'y']]);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1 });
    const record = (await deadLettered(poller.config.keys.dlt)).get(malformed)!;
    expect(record.get('reason')!.toString()).toBe('entry_malformed');
    expect(record.get(Buffer.concat([Buffer.from('orig_'), name]).toString('latin1'))).toEqual(Buffer.from('v'));
  });

  it('keeps two different names that are not UTF-8 apart, fresh and reclaimed: no false repeat', async () => {
    await ensureGroup(port, stream, 'g-parse', '0-0');
    await append(['event_id', 'e-two'], ['payload', 'x'], [Buffer.from([0xff]), 'a'], [Buffer.from([0xfe]), 'b'], ['\ufffd', 'c']);
    await append(['event_id', 'e-same'], ['payload', 'x'], [Buffer.from([0xff]), 'a'], [Buffer.from([0xff]), 'b']);
    const config = parseConsumerConfig(fastConfig(stream, { group: 'g-parse' }));
    const fresh = await claimOnce(port, config, { fresh: 10, reclaim: 0 });
    const reclaimed = await claimOnce(port, { ...config, minIdleMs: 0, retry: { ...config.retry, baseMs: 0 } }, { fresh: 10, reclaim: 10 });
    for (const { entries } of [fresh, reclaimed]) {
      const [two, same] = entries;
      expect(two).toMatchObject({ fieldNameNotUtf8: true });
      expect(two!.repeatsFieldName).toBeUndefined();
      expect(two!.fields.size).toBe(5);
      expect([...two!.fields.values()].map((v) => Buffer.from(v).toString())).toEqual(['e-two', 'x', 'a', 'b', 'c']);
      // The same bytes twice are still one name repeated.
      expect(same).toMatchObject({ fieldNameNotUtf8: true, repeatsFieldName: true });
      expect(same!.fields.size).toBe(3);
    }
    const report = await runOnce();
    expect(report).toMatchObject({ acked: 0, deadLettered: 2 });
    const reasons = [...(await deadLettered(poller.config.keys.dlt)).values()].map((r) => r.get('reason')!.toString());
    expect(reasons).toEqual(['entry_malformed', 'entry_malformed']);
  });

  it('gives a saga command consumer the exact id: a signed command whose id has a BOM is not a duplicate of the command', async () => {
    const key = 'orchestrator-signing-key-000001';
    const handled: string[] = [];
    const inbox = new Set<string>();
    const commands = createCommandConsumer({
      port,
      config: fastConfig(stream, { consumer: 'c-saga', group: 'g-saga' }),
      auth: { mode: 'hmac', keyId: 'k1', key, producer: 'orchestrator' },
      route: ROUTE,
      handler: (delivery) => {
        if (inbox.has(delivery.eventId)) return 'duplicate';
        inbox.add(delivery.eventId);
        handled.push(delivery.eventId);
        return 'committed';
      },
    });
    await commands.ensureGroup();
    const signedFor = (eventId: string, commandId: string) =>
      handSigned({ stream, eventId, payload: JSON.stringify(command(commandId)), keyId: 'k1', key });
    await append(...(await signedFor('c1', 'c1')));
    // Signed over its own bytes, BOM included, and claiming the id the lenient decoder saw.
    const forged = await append(...(await signedFor('\ufeffc1', 'c1')));
    const report = await commands.run({ mode: 'drain', deadline: Date.now() + 5_000 });
    expect(handled).toEqual(['c1']);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, authRejected: 0 });
    const [record] = await dltRecords(admin, commands.config.keys.dlt);
    expect(record).toMatchObject({ reason: 'event_id_invalid', source_entry_id: forged, event_id: '\ufeffc1' });
  });
});
