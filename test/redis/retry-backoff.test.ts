/**
 * Retry backoff (SPEC §5.6, issue 26 item 1), checked against Redis itself on both clients:
 * claim.lua judges an entry due on the Redis clock by its delivery count (retry_after), skips
 * what is not due without touching it or starving what lies behind it, reports the earliest due
 * time it saw, and with `fixed` at minIdle takes exactly what XAUTOCLAIM took. The delivery
 * time of a pending entry is set on the Redis side (XCLAIM … TIME / IDLE): that is the clock
 * the script reads, so the tests move it instead of waiting minutes.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsumerConfig } from '../../src/consume/config';
import { parseConsumerConfig } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { retryAfterMs } from '../../src/consume/retry';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { claimOnce, fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

const MIN_IDLE = 10_000;

describe.each(clientKinds)('retry backoff over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (overrides: object = {}): ConsumerConfig => parseConsumerConfig(fastConfig(stream, { minIdleMs: MIN_IDLE, ...overrides }));
  const redisNow = async (): Promise<number> => {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  /** Appends `count` entries and has a consumer that is gone read them. */
  const pendingEntries = async (count: number, prefix = 'p'): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `${prefix}${i}` }));
    await admin.xreadgroup('GROUP', 'g', 'gone', 'COUNT', count, 'STREAMS', stream, '>');
    return ids;
  };
  /** Sets a pending entry's last delivery (Redis ms) and delivery count, as a delivery then would have. */
  const deliveredAt = (id: string, ms: number, deliveries: number) => admin.xclaim(stream, 'g', 'gone', 0, id, 'TIME', ms, 'RETRYCOUNT', deliveries, 'JUSTID');

  it('takes an entry exactly when its backoff for its delivery count has passed, and reports when that is', async () => {
    const retried = config({ retry: { backoff: 'exponential', factor: 2, maxMs: 120_000, jitter: 0.3 } });
    const [id] = await pendingEntries(1);
    for (let deliveries = 1; deliveries <= 7; deliveries += 1) {
      const wait = retryAfterMs(retried.retry, MIN_IDLE, id!, deliveries);
      // 10 s, 20 s, 40 s, 80 s (jittered down by up to 30 %), then the 120 s cap (jittered): never below minIdle.
      expect(wait).toBeGreaterThanOrEqual(MIN_IDLE);
      expect(wait).toBeLessThanOrEqual(Math.min(120_000, MIN_IDLE * 2 ** (deliveries - 1)));
      // 2 s short of due: left as it was, and its due time is reported, never before it is (the
      // script reads TIME after XPENDING's idle: at most the few ms between them late).
      const before = await redisNow();
      const lastDelivery = before - wait + 2_000;
      await deliveredAt(id!, lastDelivery, deliveries);
      const early = await claimOnce(port, retried, { fresh: 0, reclaim: 10, read: 'none' });
      expect(early.reclaimed).toBe(0);
      expect(early.nextDueAt).toBeGreaterThanOrEqual(lastDelivery + wait);
      expect(early.nextDueAt! - (lastDelivery + wait)).toBeLessThanOrEqual(early.redisNow! - before);
      expect(early.nextDueAt! - early.redisNow!).toBeGreaterThan(0);
      expect(await pendingRows(admin, stream, 'g')).toEqual([expect.objectContaining({ id, consumer: 'gone', deliveries })]);
      // Due: taken, one more delivery counted, and the idle it had is told to the run.
      await deliveredAt(id!, (await redisNow()) - wait - 1, deliveries);
      const due = await claimOnce(port, retried, { fresh: 0, reclaim: 10, read: 'none' });
      expect(due.entries.map((e) => [e.id, e.deliveries])).toEqual([[id, deliveries + 1]]);
      expect(due.entries[0]!.idleBeforeClaimMs).toBeGreaterThanOrEqual(wait);
      expect(due.nextDueAt).toBeUndefined();
    }
  });

  it('spaces the deliveries of an entry that is always retained at least its backoff apart (Redis clock)', async () => {
    // minIdle as short as the rules allow (> run budget + 500 ms), so a few retries take seconds.
    const policy = { backoff: 'exponential', factor: 2, maxMs: 3_000, jitter: 0.5 } as const;
    const short = { minIdleMs: 1_300, runBudgetMs: 250, settleReserveMs: 50, handlerTimeoutMs: 100, retry: policy };
    const entryId = await append(admin, stream, { event_id: 'e', payload: 'always-fails' });
    const poller = createPoller({ port, config: fastConfig(stream, short), process: recordingProcessor([], () => Promise.reject(new Error('downstream is down'))) });
    const deliveries: Array<{ count: number; at: number }> = [];
    while (deliveries.length < 4) {
      await poller.run({ mode: 'drain' });
      // The last delivery's time as Redis recorded it: TIME − idle, read together.
      const [[, time], [, rows]] = (await admin.multi().time().xpending(stream, 'g', '-', '+', 1).exec()) as [[null, [string, string]], [null, Array<[string, string, number, number]>]];
      const [row] = rows;
      const at = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) - row![2];
      if (deliveries.at(-1)?.count !== row![3]) deliveries.push({ count: row![3], at });
      await sleepMs(50);
    }
    expect(deliveries.map((d) => d.count)).toEqual([1, 2, 3, 4]);
    const parsed = poller.config;
    for (let i = 1; i < deliveries.length; i += 1) {
      const wait = retryAfterMs(parsed.retry, parsed.minIdleMs, entryId, deliveries[i - 1]!.count);
      expect(deliveries[i]!.at - deliveries[i - 1]!.at).toBeGreaterThanOrEqual(wait);
    }
    // The waits grew: 1.3 s after the first delivery, more after the second (2.6 s jittered, ≥ 1.3 s).
    expect(retryAfterMs(parsed.retry, parsed.minIdleMs, entryId, 1)).toBe(1_300);
  });

  it('never lets entries that are not due starve a due one behind them: the cursor pages past them', async () => {
    const retried = config({ reclaimBatch: 2 }); // scans 20 rows per claim
    const ids = await pendingEntries(51);
    const now = await redisNow();
    // 50 entries delivered 5 times 11 s ago: due after minIdle at their first delivery, not at their fifth.
    for (const id of ids.slice(0, 50)) await deliveredAt(id, now - 11_000, 5);
    await deliveredAt(ids[50]!, now - 11_000, 1);
    const before = await pendingRows(admin, stream, 'g');
    const claims = [];
    for (let i = 0; i < 3; i += 1) claims.push(await claimOnce(port, retried, { fresh: 0, reclaim: 2, read: 'none' }));
    // ceil(51 / 20) claims reach it; the first two took nothing and moved the cursor 20 rows each.
    expect(claims.map((c) => c.entries.map((e) => e.id))).toEqual([[], [], [ids[50]]]);
    expect(claims.map((c) => c.nextCursor)).toEqual([ids[20], ids[40], '0-0']);
    expect(claims.map((c) => c.nextDueAt !== undefined)).toEqual([true, true, true]);
    // The skipped ones were not touched: same owner, count and delivery time.
    const after = await pendingRows(admin, stream, 'g');
    for (let i = 0; i < 50; i += 1) {
      expect(after[i]).toMatchObject({ id: ids[i], consumer: 'gone', deliveries: 5 });
      expect(after[i]!.idleMs).toBeGreaterThanOrEqual(before[i]!.idleMs);
    }
  });

  it('lateness: a drain run reaches every due entry of its pass; one whose cursor starts past it leaves it to the next run', async () => {
    const ids = await pendingEntries(41);
    const now = await redisNow();
    // 40 entries waiting on their backoff (5th delivery 11 s ago), and a due one behind them.
    for (const id of ids.slice(0, 40)) await deliveredAt(id, now - 11_000, 5);
    await deliveredAt(ids[40]!, now - 11_000, 1);
    const seen: string[] = [];
    const drain = () => createPoller({ port, config: fastConfig(stream, { minIdleMs: MIN_IDLE, reclaimBatch: 1 }), process: recordingProcessor(seen) }).run({ mode: 'drain' });
    // A pass at reclaimBatch 1 reads 10 rows a claim: the run walks 5 claims to the due entry, then wraps and stops.
    expect(await drain()).toMatchObject({ reclaimed: 1, acked: 1 });
    expect(seen).toEqual(['p40']);
    expect(await admin.get(config().keys.cursor)).toBe('0-0');
    // Due again (as if retried and due), with the stored cursor past it (a run cut mid-pass):
    // the next run finishes that pass and stops at the wrap; the run after it takes the entry.
    const late = await append(admin, stream, { event_id: 'late', payload: 'late' });
    await admin.xreadgroup('GROUP', 'g', 'gone', 'STREAMS', stream, '>');
    await deliveredAt(late, now - 11_000, 1);
    await admin.set(config().keys.cursor, `${Number(late.split('-')[0]) + 1}-0`);
    expect(await drain()).toMatchObject({ reclaimed: 0 });
    await deliveredAt(ids[0]!, now - 86_400_000, 5);
    expect(await drain()).toMatchObject({ reclaimed: 2, acked: 2 });
    expect(seen).toEqual(['p40', 'p0', 'late']);
  });

  it('keeps today behaviour with fixed at minIdle: it takes what XAUTOCLAIM takes, page by page', async () => {
    const fixed = config({ retry: { backoff: 'fixed' } });
    // The same PEL on two streams (same ids, counts and delivery times): claim.lua pages one,
    // XAUTOCLAIM the other, 3 entries a call (10 × 3 rows scanned).
    const twin = `${stream}:twin`;
    await ensureGroup(port, twin, 'g', '0-0');
    const now = await redisNow();
    const plan = Array.from({ length: 47 }, (_, i) => ({
      id: `1-${i + 1}`,
      due: i % 5 !== 1 && i % 7 !== 3,
      deliveries: 1 + (i % 9) * 7,
      deleted: i === 12 || i === 40,
    }));
    for (const key of [stream, twin]) {
      for (const entry of plan) await admin.xadd(key, entry.id, 'event_id', entry.id, 'payload', entry.id);
      await admin.xreadgroup('GROUP', 'g', 'gone', 'STREAMS', key, '>');
      for (const entry of plan) await admin.xclaim(key, 'g', 'gone', 0, entry.id, 'TIME', now - (entry.due ? MIN_IDLE + 5_000 : MIN_IDLE - 5_000), 'RETRYCOUNT', entry.deliveries, 'JUSTID');
      // Deleted from the stream while pending (and due): both report them and drop them from the PEL.
      for (const entry of plan.filter((e) => e.deleted)) await admin.xdel(key, entry.id);
    }
    let cursor = '0-0';
    const ours: Array<[string[], string[], string]> = [];
    const theirs: Array<[string[], string[], string]> = [];
    do {
      const claim = await claimOnce(port, fixed, { fresh: 0, reclaim: 3, read: 'none' });
      ours.push([claim.entries.map((e) => e.id), claim.deletedIds, claim.nextCursor!]);
      const [next, claimed, deleted] = (await admin.xautoclaim(twin, 'g', 'other', MIN_IDLE, cursor, 'COUNT', 3, 'JUSTID')) as [string, string[], string[]];
      theirs.push([claimed, deleted, next]);
      cursor = next;
    } while (cursor !== '0-0' && theirs.length < 50);
    expect(ours).toEqual(theirs);
    expect(ours.flatMap(([taken]) => taken)).toHaveLength(plan.filter((e) => e.due && !e.deleted).length);
    // Not due: untouched (still the gone consumer's); due: taken.
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows.filter((row) => row.consumer === 'gone').map((row) => row.id)).toEqual(plan.filter((e) => !e.due).map((e) => e.id));
    expect(rows.filter((row) => row.consumer === 'c1')).toHaveLength(plan.filter((e) => e.due && !e.deleted).length);
  });

  it('puts back a due entry the byte allowance cut, still due, and never takes one that is not', async () => {
    const retried = config();
    const big = (tag: string) => `${tag}:${'x'.repeat(20 * 1024)}`;
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) ids.push(await append(admin, stream, { event_id: `b${i}`, payload: big(`b${i}`) }));
    await admin.xreadgroup('GROUP', 'g', 'gone', 'STREAMS', stream, '>');
    const now = await redisNow();
    // Even ones due (3 deliveries, idle a day), odd ones not (3 deliveries, idle past minIdle only).
    for (const [i, id] of ids.entries()) await deliveredAt(id, i % 2 === 0 ? now - 86_400_000 : now - MIN_IDLE - 1_000, 3);
    const allowance = 50 * 1024; // two 20 KiB entries
    const taken: string[] = [];
    const sizes: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const claim = await claimOnce(port, retried, { fresh: 0, reclaim: 10, read: 'none', allowance, alone: false });
      sizes.push(claim.bytes);
      taken.push(...claim.entries.map((e) => e.id));
      if (claim.cut) {
        // The entry it could not take is put back as it was: 3 deliveries, still idle a day (due).
        const row = (await pendingRows(admin, stream, 'g')).find((r) => r.id === claim.nextCursor);
        expect(row).toMatchObject({ deliveries: 3 });
        expect(row!.idleMs).toBeGreaterThan(86_000_000);
      }
    }
    expect(taken).toEqual(ids.filter((_, i) => i % 2 === 0));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(allowance);
    const rows = await pendingRows(admin, stream, 'g');
    for (const row of rows.filter((r) => ids.indexOf(r.id) % 2 === 1)) expect(row).toMatchObject({ consumer: 'gone', deliveries: 3 });
  });

  it('gives an entry a run released unstarted back due at once, whatever its backoff', async () => {
    const ids = await pendingEntries(4);
    const now = await redisNow();
    // 5 deliveries each, last one a day ago: due (their backoff, up to 15 min, passed long ago).
    for (const id of ids) await deliveredAt(id, now - 86_400_000, 5);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { minIdleMs: MIN_IDLE, batch: 10 }),
      process: recordingProcessor(seen, () => sleepMs(150).then(() => 'committed' as const)),
    });
    const report = await poller.run({ mode: 'drain', deadline: Date.now() + 350 });
    expect(report.released).toBeGreaterThan(0);
    const released = (await pendingRows(admin, stream, 'g')).filter((row) => row.consumer === 'c1' && !seen.includes(`p${ids.indexOf(row.id)}`));
    expect(released.length).toBe(report.released);
    // Delivery count as before the run (5: no attempt counted), and due now for any run.
    for (const row of released) expect(row.deliveries).toBe(5);
    const other = await claimOnce(port, config({ consumer: 'c2' }), { fresh: 0, reclaim: 10, read: 'none' });
    expect(other.entries.map((e) => e.id).sort()).toEqual(released.map((r) => r.id).sort());
  });

  it('reports the earliest due time it saw in the run report', async () => {
    const ids = await pendingEntries(3);
    const now = await redisNow();
    await deliveredAt(ids[0]!, now - 60_000, 4); // not due: 4th delivery waits 80 s × jitter ≥ 64 s
    await deliveredAt(ids[1]!, now - 5_000, 1); // not due: minIdle
    await deliveredAt(ids[2]!, now - 20_000, 1); // due
    const poller = createPoller({ port, config: fastConfig(stream, { minIdleMs: MIN_IDLE }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ reclaimed: 1, acked: 1 });
    const retry = poller.config.retry;
    const expected = Math.min(now - 60_000 + retryAfterMs(retry, MIN_IDLE, ids[0]!, 4), now - 5_000 + MIN_IDLE);
    expect(report.nextDueAt).toBeGreaterThanOrEqual(expected);
    expect(report.nextDueAt! - expected).toBeLessThan(1_000);
  });
});
