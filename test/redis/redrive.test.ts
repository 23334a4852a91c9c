/**
 * SPEC §7 redrive: dead-lettered entries go back to their source stream byte-for-byte
 * (field order included), their marker is cleared and their DLT record deleted, in one
 * script; the next run handles them like any fresh entry, and a second failure writes a
 * second record. Everything is checked by reading Redis through a separate admin client.
 *
 * The binary case runs on every client: the non-UTF-8 bytes are written by the admin
 * client and copied inside Redis (settle.lua, redrive.lua); through the port they are only
 * read, which the REST client does byte-exactly.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { ensureGroup } from '../../src/consume/groups';
import { markerKeyFor } from '../../src/entry/marker-key';
import { createPoller, type Poller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import type { RedisPort } from '../../src/redis/port';
import { redriveScript } from '../../src/generated/lua-scripts';
import { MAX_RESTORE_FIELDS } from '../../src/redrive/record';
import { createRedriver, type Redriver } from '../../src/redrive/redrive';
import { Rejection, type HandlerOutcome } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig } from '../support/poller';
import { adminClient, dltRecords, pendingIds, uniquePrefix } from '../support/redis';

const HOUR_MS = 3_600_000;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

type Behaviour = (eventId: string) => HandlerOutcome;
const reject: Behaviour = () => {
  throw new Rejection('order_unknown');
};

describe.each(clientKinds)('redrive over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let poller: Poller;
  let redriver: Redriver;
  let behaviour: Behaviour;
  let seen: Array<{ eventId: string; deliveries: number }>;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');
  beforeEach(async () => {
    seen = [];
    behaviour = reject;
    poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createProcessor(rawPayload, ({ eventId, deliveries }) => {
        seen.push({ eventId, deliveries });
        return behaviour(eventId);
      }),
    });
    redriver = createRedriver({ port, config: poller.config });
    await poller.ensureGroup();
  });

  const runOnce = () => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
  const dlt = () => poller.config.keys.dlt;
  const markerOf = (sourceEntryId: string, group = 'g') => markerKeyFor(poller.config.keys, group, sourceEntryId);
  /** An entry's fields as [name, bytes] pairs, in stream order. */
  const fieldsOf = async (id: string) => {
    const [entry] = await admin.xrangeBuffer(stream, id, id);
    const flat = entry![1];
    const pairs: Array<[string, Buffer]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!.toString(), flat[i + 1]!]);
    return pairs;
  };
  const lastEntryId = async () => (await admin.xrevrange(stream, '+', '-', 'COUNT', 1))[0]![0];

  async function deadLetter(fields: Array<[string, string | Buffer]>): Promise<string> {
    const id = (await admin.xadd(stream, '*', ...fields.flat())) as string;
    expect((await runOnce()).deadLettered).toBe(1);
    return id;
  }

  it('redrives a rejected entry byte-for-byte; the next run acks it; its marker and record are gone', async () => {
    const original: Array<[string, string]> = [
      ['event', 'order.placed'],
      ['event_id', 'e1'],
      ['payload', '{"order":"o1"}'],
      ['traceparent', TRACEPARENT],
      ['x_custom', 'kept as is'],
    ];
    const sourceId = await deadLetter(original);
    expect(await admin.get(markerOf(sourceId))).toBe(sourceId);

    const { records, next } = await redriver.list({ reasons: ['order_unknown'] });
    expect(next).toBeUndefined();
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({ eventId: 'e1', reason: 'order_unknown', sourceStream: stream, sourceEntryId: sourceId, group: 'g', deliveries: 1 });
    expect([...record!.original].map(([name, value]) => [name, Buffer.from(value).toString()])).toEqual(original);

    const outcomes = await redriver.redrive([record!.id]);

    const newId = await lastEntryId();
    expect(outcomes).toEqual([{ id: record!.id, status: 'redriven', entryId: newId }]);
    expect(newId).not.toBe(sourceId);
    expect(await fieldsOf(newId)).toEqual(original.map(([name, value]) => [name, Buffer.from(value)]));
    expect(await admin.exists(markerOf(sourceId))).toBe(0);
    expect(await admin.xlen(dlt())).toBe(0);

    behaviour = () => 'committed';
    const report = await runOnce();
    expect(report).toMatchObject({ acked: 1, deadLettered: 0 });
    expect(seen).toEqual([
      { eventId: 'e1', deliveries: 1 },
      { eventId: 'e1', deliveries: 1 },
    ]);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect(await admin.xlen(dlt())).toBe(0);
  });

  it('dead-letters a redriven entry that fails again under a second, new record', async () => {
    await deadLetter([['event_id', 'e1'], ['payload', 'p']]);
    const [first] = (await redriver.list()).records;
    const [outcome] = await redriver.redrive([first!.id]);
    const entryId = outcome!.entryId;

    const report = await runOnce();

    // A marker left behind would have made this a silent "replay": acked, no record.
    expect(report).toMatchObject({ deadLettered: 1, acked: 0 });
    const { records } = await redriver.list();
    expect(records).toHaveLength(1);
    expect(records[0]!.id).not.toBe(first!.id);
    expect(records[0]).toMatchObject({ eventId: 'e1', sourceEntryId: entryId, reason: 'order_unknown' });
    expect(await admin.get(markerOf(entryId!))).toBe(entryId);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('clears the marker of an entry that had no usable event_id', async () => {
    const sourceId = await deadLetter([['payload', 'no id']]);
    const entryMarker = markerOf(sourceId);
    expect(await admin.exists(entryMarker)).toBe(1);
    const [record] = (await redriver.list({ reasons: ['event_id_missing'] })).records;

    expect((await redriver.redrive([record!.id]))[0]!.status).toBe('redriven');

    expect(await admin.exists(entryMarker)).toBe(0);
    expect(await fieldsOf(await lastEntryId())).toEqual([['payload', Buffer.from('no id')]]);
  });

  it('clears only the marker of the group whose record is redriven', async () => {
    await ensureGroup(port, stream, 'h', '0-0');
    const sourceId = await deadLetter([['event_id', 'e1'], ['payload', 'p']]);
    const byH = createPoller({ port, config: fastConfig(stream, { group: 'h' }), process: createProcessor(rawPayload, () => reject('e1')) });
    expect(await byH.run({ mode: 'drain' })).toMatchObject({ deadLettered: 1 });
    const records = (await redriver.list()).records;
    expect(records.map((r) => r.group)).toEqual(['g', 'h']);

    // The redriver is built for group g; the record names h, so h's marker is the one cleared.
    expect((await redriver.redrive([records[1]!.id]))[0]!.status).toBe('redriven');

    expect(await admin.exists(markerOf(sourceId, 'h'))).toBe(0);
    expect(await admin.get(markerOf(sourceId, 'g'))).toBe(sourceId);
    expect((await redriver.list()).records.map((r) => r.id)).toEqual([records[0]!.id]);
  });

  it('restores non-UTF-8 fields byte-for-byte', async () => {
    const payload = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]);
    const blob = Buffer.from([0x00, 0xed, 0xa0, 0x80, 0x0a]);
    const original: Array<[string, Buffer]> = [
      ['event_id', Buffer.from('e-bin')],
      ['payload', payload],
      ['blob', blob],
    ];
    await deadLetter(original);
    const [record] = (await redriver.list()).records;
    expect(Buffer.from(record!.original.get('payload')!)).toEqual(payload);

    await redriver.redrive([record!.id]);

    expect(await fieldsOf(await lastEntryId())).toEqual(original);
  });

  describe('wide entries (SPEC §3.3)', () => {
    /** `count` fields in all: event_id, payload, then numbered fields with distinct values. */
    const wideEntry = (count: number, eventId: string): Array<[string, string]> => [
      ['event_id', eventId],
      ['payload', 'p'],
      ...Array.from({ length: count - 2 }, (_, i): [string, string] => [`f${i}`, `v${i}-${'x'.repeat(i % 7)}`]),
    ];
    const asBuffers = (fields: Array<[string, string]>) => fields.map(([name, value]) => [name, Buffer.from(value)]);

    it('restores a 1,000-field entry exactly (copied field by field)', async () => {
      const original = wideEntry(1_000, 'w1');
      await deadLetter(original);
      const [record] = (await redriver.list()).records;
      expect(record).toMatchObject({ originalForm: 'fields', unrestorable: undefined });

      expect((await redriver.redrive([record!.id]))[0]!.status).toBe('redriven');

      expect(await fieldsOf(await lastEntryId())).toEqual(asBuffers(original));
      expect(await admin.xlen(dlt())).toBe(0);
    });

    it('keeps a 4,000-field entry whole (packed) and restores it exactly, past the unpack() limit', async () => {
      const original = wideEntry(4_000, 'w4');
      const sourceId = await deadLetter(original);
      const [raw] = await dltRecords(admin, dlt());
      expect(Object.keys(raw!).filter((name) => name.startsWith('orig_'))).toEqual([]);
      expect(raw).not.toHaveProperty('orig_omitted_fields');
      const [record] = (await redriver.list()).records;
      expect(record).toMatchObject({ originalForm: 'packed', unrestorable: undefined, eventId: 'w4', sourceEntryId: sourceId });
      expect(record!.originalFields.map(([name, value]) => [name, Buffer.from(value).toString()])).toEqual(original);

      const [outcome] = await redriver.redrive([record!.id]);

      expect(outcome).toMatchObject({ status: 'redriven' });
      expect(await fieldsOf(outcome!.entryId!)).toEqual(asBuffers(original));
      expect(await admin.exists(markerOf(sourceId))).toBe(0);
      expect(await admin.xlen(dlt())).toBe(0);
    });

    it('restores a packed record byte-for-byte, repeated field names and binary values included', async () => {
      const blob = Buffer.from([0xff, 0x00, 0xc1, 0x80]);
      const flat = [Buffer.from('event_id'), Buffer.from('e2'), Buffer.from('dup'), blob, Buffer.from('dup'), Buffer.from('second')];
      const packed = (await admin.callBuffer('EVAL', 'return cmsgpack.pack(ARGV)', 0, ...flat)) as Buffer;
      const id = (await admin.xadd(dlt(), '*', 'event_id', 'e2', 'reason', 'r', 'source_stream', stream, 'group', 'g', 'source_entry_id', '1-1', 'packed_original', packed)) as string;

      expect((await redriver.redrive([id]))[0]).toMatchObject({ status: 'redriven' });

      const [entry] = await admin.xrangeBuffer(stream, '-', '+');
      expect(entry![1]).toEqual(flat);
    });

    it('refuses, keeping record and marker, an entry wider than it restores', async () => {
      const original = wideEntry(MAX_RESTORE_FIELDS + 1, 'w10k');
      const sourceId = await deadLetter(original);
      const [record] = (await redriver.list()).records;
      expect(record).toMatchObject({ originalForm: 'packed', unrestorable: 'too_wide' });
      const length = await admin.xlen(stream);

      expect(await redriver.redrive([record!.id])).toEqual([{ id: record!.id, status: 'unrestorable', reason: 'too_wide' }]);

      expect(await admin.xlen(stream)).toBe(length);
      expect(await admin.xlen(dlt())).toBe(1);
      expect(await admin.exists(markerOf(sourceId))).toBe(1);
    });

    it('refuses records that cannot be restored exactly, in the script too, and keeps them', async () => {
      const record = (...fields: Array<string | Buffer>) =>
        admin.xadd(dlt(), '*', 'reason', 'r', 'source_stream', stream, 'group', 'g', 'source_entry_id', '1-1', ...fields) as Promise<string>;
      const packedMap = (await admin.callBuffer('EVAL', "return cmsgpack.pack({a = 'b'})", 0)) as Buffer;
      const packedPair = (await admin.callBuffer('EVAL', 'return cmsgpack.pack(ARGV)', 0, 'f', 'v')) as Buffer;
      const refused = [
        [await record('packed_original', Buffer.from([0x92, 0xa1])), 'packed_unreadable'],
        [await record('packed_original', packedMap), 'packed_unreadable'],
        [await record('packed_original', Buffer.concat([packedPair, Buffer.from([0x01])])), 'packed_unreadable'],
        [await record('packed_original', packedPair, 'orig_f', 'v'), 'ambiguous_original'],
        // What an older version wrote for an entry over 3,900 fields: a count, no fields.
        [await record('orig_omitted_fields', '5002'), 'fields_omitted'],
      ] as const;
      const ids = refused.map(([id]) => id);
      const length = await admin.xlen(stream);

      expect(await redriver.redrive(ids)).toEqual(refused.map(([id, reason]) => ({ id, status: 'unrestorable', reason })));
      // The script refuses them on its own, whatever the caller checked first.
      const direct = (await admin.eval(redriveScript.text, 2 + ids.length, stream, dlt(), ...ids.map(() => 'marker'), ...ids)) as string[][];
      expect(direct).toEqual(refused.map(([, reason]) => ['unrestorable', '', reason]));

      expect(await admin.xlen(stream)).toBe(length);
      expect((await admin.xrange(dlt(), '-', '+')).map(([id]) => id)).toEqual(ids);
    });
  });

  it('reports what it cannot redrive and leaves those records alone', async () => {
    await deadLetter([['event_id', 'e1'], ['payload', 'p']]);
    const [good] = (await redriver.list()).records;
    const foreign = (await admin.xadd(dlt(), '*', 'event_id', 'x', 'reason', 'r', 'source_stream', `${stream}:other`, 'orig_event_id', 'x', 'orig_payload', 'p')) as string;
    const bare = (await admin.xadd(dlt(), '*', 'event_id', 'y', 'reason', 'r', 'source_stream', stream)) as string;
    const lengthBefore = await admin.xlen(stream);

    const outcomes = await redriver.redrive([good!.id, '1-1', 'not-an-id', foreign, bare, good!.id]);

    expect(outcomes.map((o) => o.status)).toEqual(['redriven', 'missing', 'missing', 'foreign', 'no_original', 'missing']);
    expect(await admin.xlen(stream)).toBe(lengthBefore + 1);
    expect((await admin.xrange(dlt(), '-', '+')).map(([id]) => id)).toEqual([foreign, bare]);
  });

  it('lists by reason and age, page by page', async () => {
    const [seconds] = await admin.time();
    const now = Number(seconds) * 1000;
    const ids = [`${now - 2 * HOUR_MS}-0`, `${now - HOUR_MS}-0`, `${now - 1000}-0`];
    const reasons = ['a', 'b', 'a'];
    for (const [i, id] of ids.entries()) {
      await admin.xadd(dlt(), id, 'event_id', `e${i}`, 'reason', reasons[i]!, 'source_stream', stream, 'dead_lettered_at', id.split('-')[0]!, 'orig_event_id', `e${i}`);
    }
    const list = async (query: Parameters<Redriver['list']>[0]) => (await redriver.list({ now: () => now, ...query })).records.map((r) => r.id);

    expect(await list({ reasons: ['a'] })).toEqual([ids[0], ids[2]]);
    expect(await list({ olderThanMs: 90 * 60_000 })).toEqual([ids[0]]);
    expect(await list({ newerThanMs: 90 * 60_000 })).toEqual([ids[1], ids[2]]);
    expect(await list({ reasons: ['a'], olderThanMs: 30 * 60_000 })).toEqual([ids[0]]);

    const page1 = await redriver.list({ scanLimit: 2, now: () => now });
    expect(page1.records.map((r) => r.id)).toEqual(ids.slice(0, 2));
    const page2 = await redriver.list({ scanLimit: 2, after: page1.next!, now: () => now });
    expect(page2).toMatchObject({ next: undefined });
    expect(page2.records.map((r) => r.id)).toEqual([ids[2]]);
    expect(page1.records[0]).toMatchObject({ eventId: 'e0', reason: 'a', deadLetteredAt: now - 2 * HOUR_MS, deliveries: 0 });
  });
});

describe.each(clientKinds)('redrive of a signed entry over $name', (kind) => {
  it('redrives a signed entry that verifies again and is acked by the next run', async () => {
    const port = kind.connect();
    const admin = adminClient();
    try {
      const stream = `${uniquePrefix()}:signed`;
      const auth = { mode: 'hmac' as const, keyId: 'k1', key: 'redrive-signing-key-0123456789', producer: 'shop' };
      let accept = false;
      const poller = createPoller({
        port,
        config: fastConfig(stream),
        process: createSignedProcessor({
          stream,
          auth,
          decode: rawPayload,
          handler: () => {
            if (!accept) throw new Rejection('forced_for_redrive');
          },
        }),
      });
      await poller.ensureGroup();
      const publisher = createPublisher({ port, routes: { 'order.placed': stream }, auth: { ...auth } });
      await publisher.publish({ eventType: 'order.placed', eventId: 's1', payload: '{"order":"o1"}', traceparent: TRACEPARENT });

      expect(await poller.run({ mode: 'drain' })).toMatchObject({ deadLettered: 1, authRejected: 0 });
      const redriver = createRedriver({ port, config: poller.config });
      const { records } = await redriver.list({ reasons: ['forced_for_redrive'] });
      expect((await redriver.redrive(records.map((r) => r.id)))[0]).toMatchObject({ status: 'redriven' });

      accept = true;
      // Any changed byte would fail verification and come back as signature_invalid.
      expect(await poller.run({ mode: 'drain' })).toMatchObject({ acked: 1, deadLettered: 0, authRejected: 0 });
      expect(await pendingIds(admin, stream, 'g')).toEqual([]);
      expect(await admin.xlen(poller.config.keys.dlt)).toBe(0);
      expect(await admin.exists(markerKeyFor(poller.config.keys, 'g', records[0]!.sourceEntryId))).toBe(0);
    } finally {
      await port.close();
      admin.disconnect();
    }
  });
});
