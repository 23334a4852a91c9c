/**
 * Blocking reads on a connection of their own (SPEC §5.1 "Blocking reads", issue 24 items 4
 * and 5): a continuous run waiting for entries never holds up the port's shared connection —
 * the one other consumers of the process and its publisher use — and an abort ends its wait
 * at once, without losing an entry the wait had just taken.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { ioredisKind } from '../support/clients';
import { fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

describe('blocking waits (ioredis)', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    await ensureGroup(port, `${stream}:other`, 'g', '0-0');
  });

  it('leaves the shared connection free for another consumer and a publish while it waits', async () => {
    const waiting = createPoller({ port, config: fastConfig(stream, { blockMs: 8_000, runBudgetMs: 5_000 }), process: recordingProcessor([]) });
    const stop = new AbortController();
    const continuous = waiting.run({ mode: 'continuous', signal: stop.signal });
    await sleepMs(200); // it found nothing and waits

    // A second consumer on the same port: the old wait held the connection, and this run
    // failed after 3.5 s of its 3 s budget with 5 entries left pending.
    for (let i = 0; i < 5; i += 1) await append(admin, `${stream}:other`, { event_id: `o${i}`, payload: `o${i}` });
    const other = createPoller({ port, config: fastConfig(`${stream}:other`), process: recordingProcessor([]) });
    const startedAt = Date.now();
    const report = await other.run({ mode: 'drain', deadline: startedAt + 3_000 });
    expect(report.acked).toBe(5);
    expect(Date.now() - startedAt).toBeLessThan(1_000);
    expect(await pendingRows(admin, `${stream}:other`, 'g')).toEqual([]);

    // A publish on the same port (the old one took 5.9 s).
    const publisher = createPublisher({ port, routes: { 'e.t': { stream: `${stream}:pub`, auth: { mode: 'exclusive-stream', producer: 'p' } } } });
    const publishedAt = Date.now();
    await publisher.publish({ eventType: 'e.t', eventId: 'pub-1', payload: new TextEncoder().encode('{}') });
    expect(Date.now() - publishedAt).toBeLessThan(1_000);

    stop.abort();
    await continuous;
  });

  it('ends a blocking wait at once when the run is aborted', async () => {
    const poller = createPoller({ port, config: fastConfig(stream, { blockMs: 8_000, runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor([]) });
    const stop = new AbortController();
    const startedAt = Date.now();
    const running = poller.run({ mode: 'continuous', signal: stop.signal });
    setTimeout(() => stop.abort(), 300);
    const report = await running;
    // The old run returned at +8,066 ms (its blockMs).
    expect(Date.now() - startedAt).toBeLessThan(800);
    expect(report.stoppedForDeadline).toBe(false);
  });

  it('ends a wait at once after its connection was dropped and came back', async () => {
    const poller = createPoller({ port, config: fastConfig(stream, { blockMs: 3_000, runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor([]) });
    const first = poller.run({ mode: 'continuous', deadline: Date.now() + 8_000 }).catch((error: unknown) => error);
    await sleepMs(200);
    // The blocked client is dropped by the server; the run fails with it, the connection comes back.
    const blocked = ((await admin.call('CLIENT', 'LIST')) as string).split('\n').find((line) => line.includes('cmd=xreadgroup') && /flags=\S*b/.test(line));
    await admin.call('CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(blocked!)![1]!);
    await first;
    await sleepMs(300);
    const stop = new AbortController();
    const startedAt = Date.now();
    const second = poller.run({ mode: 'continuous', signal: stop.signal });
    setTimeout(() => stop.abort(), 300);
    await second;
    // With the id of the dropped connection, CLIENT UNBLOCK reached nobody: the wait ran its 3 s.
    expect(Date.now() - startedAt).toBeLessThan(1_500);
  });

  it('goes on when Redis loses its script cache mid-run: the next claim loads claim.lua again', async () => {
    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig(stream, { blockMs: 200, runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor(seen) });
    const startedAt = Date.now();
    const running = poller.run({ mode: 'continuous', deadline: startedAt + 2_500 });
    await sleepMs(600);
    await admin.script('FLUSH');
    await sleepMs(400);
    await append(admin, stream, { event_id: 'after-flush', payload: 'after-flush' });
    const report = await running;
    // The old run took the refused native claim for "nothing more" and returned at once.
    expect(Date.now() - startedAt).toBeGreaterThan(2_000);
    expect(report.stoppedForDeadline).toBe(true);
    expect(seen).toEqual(['after-flush']);
  });

  it('hands over the entry a wait took as it was aborted: nothing is stranded in its PEL', async () => {
    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig(stream, { blockMs: 8_000, runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor(seen) });
    for (let round = 0; round < 5; round += 1) {
      const stop = new AbortController();
      const running = poller.run({ mode: 'continuous', signal: stop.signal });
      await sleepMs(100);
      // The append and the abort race: the entry either wakes the wait (and is handled or
      // released) or stays unread; never taken and left pending under this consumer.
      void append(admin, stream, { event_id: `r${round}`, payload: `r${round}` });
      stop.abort();
      await running;
      for (const row of await pendingRows(admin, stream, 'g')) expect(row.deliveries).toBe(0);
    }
    await poller.run({ mode: 'drain' });
    // Each entry handled once: in the continuous run it woke, or by the drain after it.
    expect(seen.sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });
});
