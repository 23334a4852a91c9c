/**
 * SPEC §5: replay after partial failure, starvation, deleted entries, deadlines,
 * overlapping runs, round-trip cost and group creation — on every Redis client.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { errorCode } from '../../src/ground/errors';
import { ensureGroup } from '../../src/consume/groups';
import { markerKeyFor } from '../../src/entry/marker-key';
import { createPoller } from '../../src/consume/poller';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { Rejection } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { append, foreignAppend, dltRecords, pendingIds, pendingRows, uniquePrefix } from '../support/redis';

describe.each(clientKinds)('settlement over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const appendPayloads = async (count: number, prefix = 'e') => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `p${i}` }));
    return ids;
  };

  describe('replay after partial failure', () => {
    it('acks without a second DLT record when the marker is already there', async () => {
      const reject = () => Promise.reject(new Rejection('poison'));
      const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor([], reject) });
      const [id] = await appendPayloads(1);
      // A previous attempt wrote the record and the marker, then failed before XACK.
      await admin.xreadgroup('GROUP', 'g', 'c1', 'STREAMS', stream, '>');
      await admin.xadd(poller.config.keys.dlt, '*', 'event_id', 'e0', 'reason', 'poison');
      await admin.set(markerKeyFor(poller.config.keys, 'g', id!), id!, 'EX', 600);
      await admin.xclaim(stream, 'g', 'c1', 0, id!, 'IDLE', 60_000);

      const relaxed = createPoller({ port, config: fastConfig(stream, { minIdleMs: 6_000 }), process: recordingProcessor([], reject) });
      const report = await relaxed.run({ mode: 'drain' });
      // What Redis did: no second record was written, the marker was hit and the entry acked.
      expect(report).toMatchObject({ deadLettered: 0, markerHits: 1, acked: 0 });
      expect(await admin.xlen(poller.config.keys.dlt)).toBe(1);
      expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    });

    it('leaves the entry pending, with no marker, when the DLT append fails', async () => {
      const poller = createPoller({
        port,
        config: fastConfig(stream),
        process: recordingProcessor([], () => Promise.reject(new Rejection('poison'))),
      });
      const [id] = await appendPayloads(1);
      await admin.set(poller.config.keys.dlt, 'not a stream'); // XADD on it fails with WRONGTYPE
      const failure = await poller.run({ mode: 'drain' }).catch((error: unknown) => error);
      expect(errorCode(failure)).toBe('REDIS_COMMAND_FAILED');
      expect(String((failure as Error).message)).toMatch(/WRONGTYPE/);
      expect(await pendingIds(admin, stream, 'g')).toEqual([id]);
      expect(await admin.exists(markerKeyFor(poller.config.keys, 'g', id!))).toBe(0);
      expect(await admin.get(poller.config.keys.dlt)).toBe('not a stream');
    });

    it('still acks the committed entries of a round whose dead-letter fails', async () => {
      const poller = createPoller({
        port,
        config: fastConfig(stream),
        process: recordingProcessor([], (payload) => (payload === 'p1' ? Promise.reject(new Rejection('poison')) : 'committed')),
      });
      const ids = await appendPayloads(3);
      await admin.set(poller.config.keys.dlt, 'not a stream');
      await expect(poller.run({ mode: 'drain' })).rejects.toMatchObject({ code: 'REDIS_COMMAND_FAILED' });
      expect(await pendingIds(admin, stream, 'g')).toEqual([ids[1]]);
    });
  });

  it('does not count as acked an id that was no longer pending when the round settled', async () => {
    const ids = await appendPayloads(2);
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      // Someone else acked p0 while its handler ran (e.g. an operator's manual XACK).
      process: recordingProcessor([], async (payload) => {
        if (payload === 'p0') await admin.xack(stream, 'g', ids[0]!);
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ acked: 1, handled: 2, retained: 0, markerHits: 0 });
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  describe('markers per group and entry (SPEC §3.4)', () => {
    const rejectAll = () => recordingProcessor([], () => Promise.reject(new Rejection('poison')));

    it('gives each group that rejects the same entry its own record and marker', async () => {
      await ensureGroup(port, stream, 'h', '0-0');
      const [id] = await appendPayloads(1);
      const byG = createPoller({ port, config: fastConfig(stream), process: rejectAll() });
      const byH = createPoller({ port, config: fastConfig(stream, { group: 'h' }), process: rejectAll() });

      expect(await byG.run({ mode: 'drain' })).toMatchObject({ deadLettered: 1 });
      expect(await byH.run({ mode: 'drain' })).toMatchObject({ deadLettered: 1 });

      const records = await dltRecords(admin, byG.config.keys.dlt);
      expect(records.map((r) => [r.group, r.source_entry_id, r.event_id])).toEqual([
        ['g', id, 'e0'],
        ['h', id, 'e0'],
      ]);
      expect(await admin.get(markerKeyFor(byG.config.keys, 'g', id!))).toBe(id);
      expect(await admin.get(markerKeyFor(byG.config.keys, 'h', id!))).toBe(id);
      expect(await pendingIds(admin, stream, 'h')).toEqual([]);
    });

    it('records a second poison entry that reuses an event id', async () => {
      const first = await append(admin, stream, { event_id: 'same', payload: 'p1' });
      const second = await append(admin, stream, { event_id: 'same', payload: 'p2' });
      const poller = createPoller({ port, config: fastConfig(stream), process: rejectAll() });

      expect(await poller.run({ mode: 'drain' })).toMatchObject({ deadLettered: 2 });

      const records = await dltRecords(admin, poller.config.keys.dlt);
      expect(records.map((r) => [r.source_entry_id, r.orig_payload])).toEqual([
        [first, 'p1'],
        [second, 'p2'],
      ]);
      expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    });

    it('puts markers under an overridden prefix, before <group>:<entry id>', async () => {
      const markerPrefix = `${stream}:custom-markers:`;
      const poller = createPoller({ port, config: fastConfig(stream, { keys: { markerPrefix } }), process: rejectAll() });
      const [id] = await appendPayloads(1);
      await poller.run({ mode: 'drain' });
      expect(await admin.get(`${markerPrefix}g:${id}`)).toBe(id);
    });
  });

  it('dead-letters an entry too wide to copy field by field with the whole entry packed, never a bare count', async () => {
    const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor([], () => Promise.reject(new Rejection('poison'))) });
    const wide: Record<string, string> = { event_id: 'wide', payload: 'p' };
    for (let i = 0; i < 5_000; i += 1) wide[`f${i}`] = `x${i}`;
    // Wider than a script can take as arguments: appended by a plain XADD.
    const id = await foreignAppend(admin, stream, wide);
    const report = await poller.run({ mode: 'drain' });
    expect(report.deadLettered).toBe(1);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    const [raw] = await dltRecords(admin, poller.config.keys.dlt);
    expect(raw).toMatchObject({ reason: 'poison', event_id: 'wide', source_entry_id: id });
    expect(Object.keys(raw!).filter((name) => name.startsWith('orig_'))).toEqual([]);
    const [item] = await admin.xrangeBuffer(poller.config.keys.dlt, '-', '+');
    const packedAt = item![1].findIndex((name) => name.toString() === 'packed_original');
    const unpacked = (await admin.eval('return cmsgpack.unpack(ARGV[1])', 0, item![1][packedAt + 1]!)) as string[];
    expect(unpacked).toEqual(Object.entries(wide).flat());
  });

  it('restarts the PEL pass when the stored cursor is not an entry id', async () => {
    const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor([]) });
    await admin.set(poller.config.keys.cursor, 'garbage');
    await appendPayloads(1);
    const report = await poller.run({ mode: 'drain' });
    expect(report.acked).toBe(1);
    expect(await admin.get(poller.config.keys.cursor)).toBe('0-0');
  });

  describe('a stored cursor XAUTOCLAIM cannot use restarts the pass at 0-0', () => {
    /** One entry pending for a consumer that is gone, idle long enough to be reclaimed. */
    const abandoned = async () => {
      const [id] = await appendPayloads(1);
      await admin.xreadgroup('GROUP', 'g', 'gone', 'STREAMS', stream, '>');
      await admin.xclaim(stream, 'g', 'gone', 0, id!, 'IDLE', 60_000);
      return id!;
    };
    const reclaimer = () => createPoller({ port, config: fastConfig(stream, { minIdleMs: 6_000 }), process: recordingProcessor([]) });

    it('an entry id that overflows: reclaims from 0-0 and stores the next cursor over it', async () => {
      await abandoned();
      const poller = reclaimer();
      await admin.set(poller.config.keys.cursor, '99999999999999999999999-0');
      for (let round = 0; round < 2; round += 1) {
        expect(await poller.run({ mode: 'drain' })).toMatchObject({ reclaimed: 1 - round, acked: 1 - round });
      }
      expect(await admin.get(poller.config.keys.cursor)).toBe('0-0');
      expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    });

    it('a cursor key of another type: reclaims from 0-0 every pass and leaves the key alone', async () => {
      const id = await abandoned();
      const poller = reclaimer();
      await admin.hset(poller.config.keys.cursor, 'not', 'a cursor');
      expect(await poller.run({ mode: 'drain' })).toMatchObject({ reclaimed: 1, acked: 1 });
      expect(await admin.hgetall(poller.config.keys.cursor)).toEqual({ not: 'a cursor' });
      expect(await pendingIds(admin, stream, 'g')).not.toContain(id);
    });

    it('an error that is not the cursor\'s fault still fails the round, writing nothing', async () => {
      const poller = createPoller({ port, config: fastConfig(`${stream}:str`), process: recordingProcessor([]) });
      await admin.set(`${stream}:str`, 'not a stream');
      await admin.set(poller.config.keys.cursor, '5-0');
      await expect(poller.run({ mode: 'drain' })).rejects.toMatchObject({ code: 'REDIS_COMMAND_FAILED', replyCode: 'WRONGTYPE' });
      expect(await admin.get(poller.config.keys.cursor)).toBe('5-0');
    });
  });

  it('pages through a PEL of always-retained entries across runs that share no state', async () => {
    const ids = await appendPayloads(12);
    await admin.xreadgroup('GROUP', 'g', 'gone', 'COUNT', 100, 'STREAMS', stream, '>');
    const reclaimedPerRun: string[][] = [];
    for (let run = 0; run < 3; run += 1) {
      // Every entry has been idle "long enough" again, the first page included.
      await admin.xclaim(stream, 'g', 'gone', 0, ...ids, 'IDLE', 60_000);
      const runPort = kind.connect();
      const seen: string[] = [];
      const poller = createPoller({
        port: runPort,
        config: fastConfig(stream, { consumer: `run-${run}`, reclaimBatch: 5, minIdleMs: 6_000 }),
        process: recordingProcessor(seen, () => Promise.reject(new Error('always transient'))),
      });
      const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
      await runPort.close();
      expect(report.retained).toBe(seen.length);
      reclaimedPerRun.push(seen);
    }
    expect(reclaimedPerRun.map((s) => s.length)).toEqual([5, 5, 2]);
    expect(new Set(reclaimedPerRun.flat())).toEqual(new Set(ids.map((_, i) => `p${i}`)));
    expect(await pendingIds(admin, stream, 'g')).toEqual(ids);
    expect(await admin.xlen(`${stream}:dlt`)).toBe(0);
  });

  it('counts a pending entry deleted before its ack as deletedPending', async () => {
    const ids = await appendPayloads(2);
    await admin.xreadgroup('GROUP', 'g', 'gone', 'STREAMS', stream, '>');
    await admin.xdel(stream, ids[0]!);
    // XCLAIM would drop the deleted id from the PEL itself, so let real idle time pass instead
    // (minIdleMs is at least runBudgetMs + 500 ms: src/consume/config.ts).
    await sleepMs(750);
    const seen: string[] = [];
    const config = fastConfig(stream, { minIdleMs: 700, runBudgetMs: 200 });
    const poller = createPoller({ port, config, process: recordingProcessor(seen) });
    const report = await poller.run({ mode: 'drain' });
    expect(report.deletedPending).toBe(1);
    expect(seen).toEqual(['p1']);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('stops starting handlers at the deadline, settles what was decided and leaves the rest pending', async () => {
    const ids = await appendPayloads(5);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: recordingProcessor(seen, () => sleepMs(200).then(() => 'committed' as const)),
    });
    // settleBy = deadline - 50 ms reserve: e0 and e1 finish, e2 is cut short, e3 and e4 never start.
    const report = await poller.run({ mode: 'drain', deadline: Date.now() + 550 });
    expect(report.stoppedForDeadline).toBe(true);
    expect(seen).toEqual(['p0', 'p1', 'p2']);
    expect(report.acked).toBe(2);
    expect(await pendingIds(admin, stream, 'g')).toEqual(ids.slice(2));
  });

  it('never double-handles between overlapping runs that share a consumer name', async () => {
    await appendPayloads(6);
    const seen: string[] = [];
    const slow = () => sleepMs(40).then(() => 'committed' as const);
    const make = (p: RedisPort) =>
      createPoller({ port: p, config: fastConfig(stream, { consumer: 'shared', batch: 2 }), process: recordingProcessor(seen, slow) });
    const otherPort = kind.connect();
    const [a, b] = await Promise.all([make(port).run({ mode: 'drain' }), make(otherPort).run({ mode: 'drain' })]);
    await otherPort.close();
    expect(seen.slice().sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    expect(a.acked + b.acked).toBe(6);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it.each([1, 50, 500])('costs exactly 2 round trips per round at batch %i', async (batch) => {
    await appendPayloads(batch);
    const warm = createPoller({ port, config: fastConfig(`${stream}:warm`), process: recordingProcessor([]) });
    await warm.ensureGroup();
    await warm.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 }); // loads the scripts into this server's cache
    const metered = meterPort(port);
    const poller = createPoller({ port: metered, config: fastConfig(stream, { batch }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
    expect(report.acked).toBe(batch);
    expect(metered.roundTrips).toBe(2);
    expect(report.roundTrips).toBe(2);
  });

  it('in continuous mode handles entries appended while it waits, until stopped', async () => {
    const seen: string[] = [];
    const stop = new AbortController();
    const poller = createPoller({
      port,
      config: fastConfig(stream, { blockMs: 200 }),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'late2') stop.abort();
        return 'committed';
      }),
    });
    const running = poller.run({ mode: 'continuous', signal: stop.signal });
    await sleepMs(50);
    await append(admin, stream, { event_id: 'l1', payload: 'late1' });
    await sleepMs(300);
    await append(admin, stream, { event_id: 'l2', payload: 'late2' });
    const report = await running;
    expect(seen).toEqual(['late1', 'late2']);
    expect(report.acked).toBe(2);
    expect(report.rounds).toBeGreaterThanOrEqual(2);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('rejects a blocking wait on a client that cannot block', () => {
    const build = () => createPoller({ port, config: fastConfig(stream, { wait: 'block' }), process: recordingProcessor([]) });
    if (port.transport === 'tcp') expect(build).not.toThrow();
    else expect(build).toThrow(/wait: "block" needs a TCP client/);
  });

  it('never resets an existing group', async () => {
    const ids = await appendPayloads(3);
    await admin.xreadgroup('GROUP', 'g', 'c1', 'COUNT', 2, 'STREAMS', stream, '>');
    expect(await ensureGroup(port, stream, 'g', '0-0')).toBe('exists');
    expect(await ensureGroup(port, stream, 'g', '$')).toBe('exists');
    const groups = (await admin.xinfo('GROUPS', stream)) as unknown[][];
    const info = Object.fromEntries(chunk(groups[0]!));
    expect(info['last-delivered-id']).toBe(ids[1]);
    expect((await pendingRows(admin, stream, 'g')).length).toBe(2);
  });

  it('creates a missing stream and group from $ when asked', async () => {
    const fresh = `${uniquePrefix()}:new`;
    await append(admin, fresh, { event_id: 'old', payload: 'x' }).then(() => admin.del(fresh));
    await append(admin, fresh, { event_id: 'old', payload: 'x' });
    expect(await ensureGroup(port, fresh, 'late', '$')).toBe('created');
    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig(fresh, { group: 'late' }), process: recordingProcessor(seen) });
    await append(admin, fresh, { event_id: 'new', payload: 'y' });
    await poller.run({ mode: 'drain' });
    expect(seen).toEqual(['y']);
  });
});

function chunk(flat: unknown[]): Array<[string, unknown]> {
  const pairs: Array<[string, unknown]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([String(flat[i]), flat[i + 1]]);
  return pairs;
}
