/**
 * One stop path (issue 24 items 2, 3, 10): whatever ends a run — a round hook that throws, a
 * handler that blocks the event loop past the deadline, a key's backlog held behind a retained
 * entry — the run settles what committed, releases what never started and puts back what is
 * held, before it reports or throws. Checked on what Redis holds afterwards.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { CallbackError } from '../../src/ground/errors';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import type { RedisPort } from '../../src/redis/port';
import { runReportOf } from '../../src/consume/run';
import type { RoundReport } from '../../src/consume/report';
import { clientKinds } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

const MIN_IDLE = 10_000;

describe.each(clientKinds)('the stop path over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const appendPayloads = async (count: number, prefix = 'p', key?: (i: number) => string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `${key?.(i) ?? ''}${prefix}${i}` }));
    return ids;
  };

  it('reports a run that stops because the time left cannot cover one more entry as stopped for its deadline', async () => {
    await appendPayloads(5);
    const seen: string[] = [];
    const startedAt = Date.now();
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 1 }),
      process: recordingProcessor(seen, async () => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return 'committed' as const;
      }),
    });
    // 400 ms an entry, 950 ms before the settle reserve: two entries fit, and once the second
    // is handled (~800 ms) the ~150 ms left cannot cover a third, so no claim goes out.
    const report = await poller.run({ mode: 'drain', deadline: startedAt + 1_000 });
    expect(seen).toEqual(['p0', 'p1']);
    expect(Date.now() - startedAt).toBeLessThan(950);
    expect(report.stoppedForDeadline).toBe(true);
    expect((await pendingRows(admin, stream, 'g')).length).toBe(0);
  });

  it('settles what committed and releases what was claimed ahead when a round hook throws', async () => {
    const ids = await appendPayloads(40);
    let rounds = 0;
    const poller = createPoller({ port, config: fastConfig(stream, { batch: 5, minIdleMs: MIN_IDLE }), process: recordingProcessor([]) });
    // A warm-up run teaches the process the handling time, so this run claims ahead from its first round.
    await poller.run({ mode: 'drain', maxRounds: 1 });
    const error = await poller
      .run({
        mode: 'drain',
        onRound: () => {
          rounds += 1;
          if (rounds === 2) throw new Error('dashboard down');
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallbackError);
    expect(error).toMatchObject({ code: 'CALLBACK_FAILED', callback: 'onRound' });
    expect((error as Error).message).toContain('dashboard down');
    const report = runReportOf(error)!;
    // Every entry a handler committed was acked (the old run left 10 of 20 un-acked); what was
    // claimed and never started was released: reclaimable at once, no delivery counted.
    expect(report.handled).toBeGreaterThanOrEqual(5);
    expect(report.acked).toBe(report.handled);
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows.length).toBeGreaterThan(0);
    expect(report.released).toBe(rows.length);
    for (const row of rows) expect(row).toMatchObject({ deliveries: 0 });
    for (const row of rows) expect(row.idleMs).toBeGreaterThanOrEqual(MIN_IDLE);
    expect(rows.map((row) => row.id).every((id) => ids.includes(id))).toBe(true);
  });

  it('stops and settles when an async round hook rejects, instead of an unhandled rejection', async () => {
    await appendPayloads(12);
    const poller = createPoller({ port, config: fastConfig(stream, { batch: 4, minIdleMs: MIN_IDLE }), process: recordingProcessor([]) });
    const error = await poller
      .run({
        mode: 'drain',
        onRound: async () => {
          await Promise.resolve();
          throw new Error('metrics sink down');
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CALLBACK_FAILED', callback: 'onRound' });
    const report = runReportOf(error)!;
    expect(report.acked).toBe(report.handled);
    for (const row of await pendingRows(admin, stream, 'g')) expect(row).toMatchObject({ deliveries: 0 });
  });

  it('keeps an entry whose ordering key comes back as a promise or a number, handling the rest', async () => {
    await appendPayloads(4);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 4, concurrency: 2, minIdleMs: MIN_IDLE }),
      orderingKey: ((entry: { fields: ReadonlyMap<string, Uint8Array> }) => {
        const text = new TextDecoder().decode(entry.fields.get('payload')!);
        if (text === 'p1') return Promise.reject(new Error('async key'));
        if (text === 'p2') return 42;
        return text;
      }) as never,
      process: recordingProcessor(seen),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(seen.sort()).toEqual(['p0', 'p3']);
    expect(report).toMatchObject({ acked: 2, held: 2, handlerContractErrors: 2 });
  });

  it('settles the round a deadline cut even when the ordering key throws for an entry of it', async () => {
    await appendPayloads(6);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 6, concurrency: 2, settleReserveMs: 50, minIdleMs: MIN_IDLE }),
      orderingKey: (entry) => {
        const text = new TextDecoder().decode(entry.fields.get('payload')!);
        if (text === 'p5') throw new Error('bad key');
        return text;
      },
      process: recordingProcessor(seen, async (payload) => {
        await new Promise((r) => setTimeout(r, payload === 'p0' ? 100 : 400));
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain', deadline: Date.now() + 350 });
    // p0 committed (acked); p1 and p2 outlived the deadline (retained); p3, p4 never started
    // (released); p5 has no key (held: kept as it was). The old run failed at p5's key and
    // left every entry pending, p0 included.
    expect(seen.sort()).toEqual(['p0', 'p1', 'p2']);
    expect(report).toMatchObject({ acked: 1, released: 2, held: 1, stoppedForDeadline: true });
  });

  it('keeps at most a batch of held entries instead of walking a key backlog into its PEL', async () => {
    // 2,000 entries of one ordering key, the first one failing: the old run handled 1, took
    // 23 rounds and left all 2,000 in its PEL with their delivery counts raised.
    const pipeline = admin.pipeline();
    for (let i = 0; i < 2_000; i += 1) pipeline.xadd(stream, '*', 'event_id', `k${i}`, 'payload', `k${i}`);
    await pipeline.exec();
    const seen: string[] = [];
    const rounds: RoundReport[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 100, concurrency: 4, minIdleMs: MIN_IDLE }),
      orderingKey: () => 'K',
      process: recordingProcessor(seen, () => {
        throw new Error('downstream down');
      }),
    });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(seen).toEqual(['k0']);
    expect(rounds.length).toBeLessThanOrEqual(2);
    const rows = await pendingRows(admin, stream, 'g');
    // k0 (retained) and at most one batch of held entries behind it; the rest unread.
    expect(rows.length).toBeLessThanOrEqual(1 + 100);
    expect(rows[0]).toMatchObject({ deliveries: 1 });
    for (const row of rows.slice(1)) expect(row).toMatchObject({ consumer: 'c1', deliveries: 0 });
    for (const row of rows) expect(row.idleMs).toBeLessThan(MIN_IDLE);
    expect(report.held).toBe(rows.length - 1);
    expect(Number((await admin.xinfo('GROUPS', stream) as unknown[][])[0]![11])).toBeGreaterThan(1_000); // lag: still unread
  });

  it('still settles and reports when a handler blocks the event loop past the deadline', async () => {
    await appendPayloads(4);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 4, settleReserveMs: 50, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'p1') {
          const until = Date.now() + 1_200; // deadline + 500 ms long past when it returns
          while (Date.now() < until);
        }
        return 'committed';
      }),
    });
    const startedAt = Date.now();
    const report = await poller.run({ mode: 'drain', deadline: startedAt + 400 });
    // p0 committed in time (acked); p1 answered after the deadline (retained); p2, p3 never
    // started (released at once for any run).
    expect(seen).toEqual(['p0', 'p1']);
    expect(report).toMatchObject({ acked: 1, retained: 3, released: 2 });
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows.map((row) => row.deliveries)).toEqual([1, 0, 0]);
  });
});
