/**
 * Flow control's per-key queue against Redis (SPEC §5.7, issue 27 slice 2): a key's entries
 * are admitted first in, first out, so a later entry never overtakes a parked one; under
 * strict order a retained head keeps every later entry of its key unhandled by every run
 * until it settles, while other keys go on; a dead run's pending entries become heads once
 * its lease ends, so the key moves on within minIdle in order; a stopping run's unstarted
 * entries are queued as heads, and a replayed settle queues nothing twice.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from '../../src/consume/config';
import { exchange } from '../../src/consume/exchange';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { settleCall } from '../../src/consume/settle';
import { probeBacklog } from '../../src/probes/backlog';
import { flowQueueKey, flowReadyKey } from '../../src/entry/keys';
import { decodeText } from '../../src/ground/text';
import type { RedisPort } from '../../src/redis/port';
import { Verdicts } from '../../src/verdict/verdict';
import { clientKinds, type ClientKind } from '../support/clients';
import { InFlight, runFleet } from '../support/flow-fleet';
import { claimOnce, fastConfig, sleepMs } from '../support/poller';
import { append, pendingRows } from '../support/redis';
import { useRedisPerTest } from '../support/redis-suite';

/** Runs short enough that minIdle (≥ budget + 0.5 s) is 1.5 s: a retained head waits that long between attempts. */
const SHORT: Partial<ConsumerConfigInput> = { runBudgetMs: 1_000, minIdleMs: 1_500, handlerTimeoutMs: 500, retry: { backoff: 'fixed', baseMs: 1_500 } };

describe.each(clientKinds)('flow queues and strict order over $name', (kind: ClientKind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (consumer: string, over: Partial<ConsumerConfigInput> = {}): ConsumerConfig =>
    parseConsumerConfig(fastConfig(stream, { consumer, batch: 10, concurrency: 4, flow: { limit: 1, order: 'strict' }, ...SHORT, ...over }));
  const lease = () => config('c').keys.flowLease;
  const keyed = (key: string, n: number) => append(admin, stream, { event_id: `${key}-${n}`, payload: `${key}:${n}`, flow_key: key });
  const plan = (token: string, strict: boolean, leaseMs = 5_000) => ({ token, leaseMs, limit: 1, strict });
  const key = (text: string) => new TextEncoder().encode(text);

  it('keeps a retained head’s later entries unhandled by 4 concurrent runs until it settles, while other keys finish, and completes the key in order', async () => {
    await keyed('A', 0);
    await keyed('A', 1);
    for (let n = 0; n < 10; n += 1) for (const other of ['B', 'C', 'D', 'E']) await keyed(other, n);
    const flight = new InFlight();
    let headAttempts = 0;
    const reports = await runFleet({
      connect: () => kind.connect(),
      configs: [1, 2, 3, 4].map((i) => config(`c${i}`)),
      // A:0 is retained twice (each retry waits its 1.5 s backoff), then commits. The rest of
      // A arrives while it waits: fresh entries any run could take at once, were the key open.
      handle: async (text) => {
        const retain = text === 'A:0' && ++headAttempts <= 2;
        if (text === 'A:0' && headAttempts === 1) for (let n = 2; n < 6; n += 1) await keyed('A', n);
        return flight.handle(text.split(':')[0]!, text, 5, retain);
      },
      done: () => flight.committed.length >= 46,
    });

    expect(headAttempts).toBe(3);
    expect(flight.committed.filter((p) => p.startsWith('A:'))).toEqual(['A:0', 'A:1', 'A:2', 'A:3', 'A:4', 'A:5']);
    const headCommit = flight.committedAt.get('A:0')!;
    for (let n = 1; n < 6; n += 1) expect(flight.startedAt.get(`A:${n}`)!, `A:${n}`).toBeGreaterThanOrEqual(headCommit);
    // The other keys did not wait for A: every one of their entries committed while A was closed.
    const others = flight.committed.filter((p) => !p.startsWith('A:'));
    expect(others).toHaveLength(40);
    for (const payload of others) expect(flight.committedAt.get(payload)!, payload).toBeLessThan(headCommit);
    for (const k of ['A', 'B', 'C', 'D', 'E']) expect(flight.overlapOf(k), k).toBe(1);
    expect(reports.reduce((sum, r) => sum + r.flowParked, 0)).toBeGreaterThan(0);
    expect(reports.reduce((sum, r) => sum + r.flowLeaseLost, 0)).toBe(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(lease(), flowQueueKey(lease()))).toBe(0);
  }, 40_000);

  it('makes a dead run’s pending entry the head once its lease ends: the key moves on within minIdle, in order', async () => {
    await keyed('k', 0);
    await keyed('k', 1);
    const claimedAt = Date.now();
    const dead = await claimOnce(port, config('dead'), { fresh: 1, reclaim: 0, flow: plan('dead.', true, 600) });
    expect(dead.entries.map((e) => decodeText(e.fields.get('payload')!))).toEqual(['k:0']);

    const seen: Array<[string, number]> = [];
    const live = createPoller({ port, config: config('live'), process: createProcessor(rawPayload, ({ payload }) => (seen.push([decodeText(payload), Date.now() - claimedAt]), 'committed')) });
    while (seen.length < 2 && Date.now() - claimedAt < 6_000) {
      await live.run({ mode: 'drain' });
      await sleepMs(100);
    }
    // k:1 waited behind k:0 past the dead run's lease (order 'none' hands it out then), until k:0 was due again.
    expect(seen.map(([payload]) => payload)).toEqual(['k:0', 'k:1']);
    expect(seen[0]![1]).toBeGreaterThanOrEqual(1_500);
    expect(seen[0]![1]).toBeLessThan(1_500 + 1_000);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(lease(), flowQueueKey(lease()))).toBe(0);
  });

  it('queues a stopping run’s unstarted entry as its key’s head, closing the key to later entries; a replayed settle queues nothing twice', async () => {
    const first = await keyed('k', 0);
    await keyed('k', 1);
    const a = config('a');
    const [taken] = (await claimOnce(port, a, { fresh: 1, reclaim: 0, flow: plan('A.', true) })).entries;
    expect(taken?.id).toBe(first);
    // The run stops without starting it: its lease goes back, and the entry (still pending) is named to queue.
    const giveBack = settleCall(a, [], { token: 'A.', limit: 1, strict: true, keys: [{ key: key('k'), ids: [first], queued: [first] }] })!;
    const settled = await exchange(port, a, { settles: [giveBack, giveBack] });
    expect(settled.settled.map((s) => s?.readyKeys)).toEqual([1, 0]);
    expect(await admin.zcard(flowQueueKey(lease()))).toBe(1);

    const seen: string[] = [];
    const other = createPoller({ port, config: config('b'), process: createProcessor(rawPayload, ({ payload }) => (seen.push(decodeText(payload)), 'committed')) });
    const report = await other.run({ mode: 'drain' });
    // k:1 is behind the head, which is not due yet (its claim counted a delivery): nothing runs.
    expect(report.flowParked).toBe(1);
    expect(seen).toEqual([]);
    expect(await admin.zcard(flowQueueKey(lease()))).toBe(2);
  });

  it('hands a parked entry out before a later entry of its key, even to the run that holds the key', async () => {
    const ids = [await keyed('k', 0), await keyed('k', 1), await keyed('k', 2)];
    const none = (consumer: string) => config(consumer, { flow: { limit: 1 } });
    const a = none('a');
    const taken: string[] = [];
    const claimA = async () => {
      const claim = await claimOnce(port, a, { fresh: 1, reclaim: 5, flow: plan('A.', false) });
      taken.push(...claim.entries.map((e) => e.id));
      return claim;
    };
    await claimA(); // A holds k with k:0 in flight
    expect((await claimOnce(port, none('b'), { fresh: 1, reclaim: 0, flow: plan('B.', false) })).flowParked).toBe(1); // k:1 parked
    // A, still holding k, reads k:2: it must not overtake k:1, so it is parked behind it and the key made ready.
    expect((await claimA()).flowParked).toBe(1);
    expect(await admin.zrange(flowReadyKey(lease()), 0, -1)).toEqual(['k']);
    await claimA();
    expect(taken).toEqual(ids);
  });

  it('serves a head only once it is due, and counts its wait as the claim’s next due time', async () => {
    const first = await keyed('k', 0);
    const a = config('a');
    const [taken] = (await claimOnce(port, a, { fresh: 1, reclaim: 0, flow: plan('A.', true) })).entries;
    const retained = settleCall(a, [{ entry: taken!, verdict: Verdicts.retain('handler_error') }], { token: 'A.', limit: 1, strict: true, keys: [{ key: key('k'), ids: [first], queued: [first] }] })!;
    await exchange(port, a, { settles: [retained] });
    expect(await admin.zrange(flowReadyKey(lease()), 0, -1)).toEqual(['k']);
    // The ready key's head was delivered just now: not due for its backoff, so it stays pending and the key leaves the set.
    const early = await claimOnce(port, config('b'), { fresh: 1, reclaim: 5, flow: plan('B.', true) });
    expect(early.entries).toEqual([]);
    expect(early.nextDueAt).toBeGreaterThan(Date.now() + 1_000);
    expect(await admin.exists(flowReadyKey(lease()))).toBe(0);
    expect(await admin.zcard(flowQueueKey(lease()))).toBe(1);
  });

  it('leaves the cursor pass half the reclaim count: ready keys never starve a due entry of the PEL', async () => {
    const due = await append(admin, stream, { event_id: 'u', payload: 'u:0' });
    await claimOnce(port, config('x'), { fresh: 1, reclaim: 0 });
    await admin.xclaim(stream, 'g', 'x', 0, due, 'IDLE', 60_000); // long past its backoff
    const first = await keyed('k', 0);
    const [parkedA, parkedB] = [await keyed('k', 1), await keyed('k', 2)];
    const none = (consumer: string) => config(consumer, { flow: { limit: 1 } });
    const [taken] = (await claimOnce(port, none('a'), { fresh: 1, reclaim: 0, flow: plan('A.', false) })).entries;
    expect(taken?.id).toBe(first);
    expect((await claimOnce(port, none('b'), { fresh: 2, reclaim: 0, flow: plan('B.', false) })).flowParked).toBe(2);
    const ack = settleCall(none('a'), [{ entry: taken!, verdict: Verdicts.ack() }], { token: 'A.', limit: 1, strict: false, keys: [{ key: key('k'), ids: [first], queued: [] }] })!;
    expect((await exchange(port, none('a'), { settles: [ack] })).settled[0]).toMatchObject({ readyKeys: 1 });
    const claim = await claimOnce(port, none('c'), { fresh: 0, reclaim: 2, flow: plan('C.', false) });
    expect(claim.entries.map((e) => e.id)).toEqual([parkedA, due]);
    // The key is ready again for its next entry.
    expect(await admin.zrange(flowReadyKey(lease()), 0, -1)).toEqual(['k']);
    expect(parkedB).not.toBe(parkedA);
  });

  it('shows a closed key with its head and age, and the busiest keys, in the backlog probe', async () => {
    const head = await keyed('k', 0);
    await keyed('k', 1);
    await keyed('other', 0);
    const a = config('a');
    const [taken] = (await claimOnce(port, a, { fresh: 1, reclaim: 0, flow: plan('A.', true) })).entries;
    const retained = settleCall(a, [{ entry: taken!, verdict: Verdicts.retain('handler_error') }], { token: 'A.', limit: 1, strict: true, keys: [{ key: key('k'), ids: [head], queued: [head] }] })!;
    await exchange(port, a, { settles: [retained] });
    await claimOnce(port, config('b'), { fresh: 5, reclaim: 0, flow: plan('B.', true) }); // k:1 parks behind its head; other is admitted
    const backlog = await probeBacklog(port, { stream, group: 'g', flowLease: lease() });
    expect(backlog.flow).toMatchObject({ keys: 2, waiting: 2, readyKeys: 1 });
    expect(backlog.flow!.closedKeys).toEqual([{ key: 'k', headId: head, headAgeMs: expect.any(Number), waiting: 2 }]);
    expect(backlog.flow!.closedKeys[0]!.headAgeMs).toBeLessThan(60_000);
    expect(backlog.flow!.busiestKeys.map((k) => [k.key, k.waiting])).toEqual([['k', 2]]);
    expect(backlog.flow!.closedOverAge).toBe(0);
    // With an alert age the head has passed, the key counts as stuck; with one it has not, not.
    await sleepMs(20);
    expect((await probeBacklog(port, { stream, group: 'g', flowLease: lease(), flowClosedAlertMs: 10 })).flow!.closedOverAge).toBe(1);
    expect((await probeBacklog(port, { stream, group: 'g', flowLease: lease(), flowClosedAlertMs: 60_000 })).flow!.closedOverAge).toBe(0);
    // Without the lease hash named, the probe reads none of it.
    expect((await probeBacklog(port, { stream, group: 'g' })).flow).toBeUndefined();
  });
});
