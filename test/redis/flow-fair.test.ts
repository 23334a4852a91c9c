/**
 * Fair batches against Redis (SPEC §5.7, issue 27 item 4): one claim admits at most `share`
 * entries of one key, whichever way they come; the rest wait in the key's queue and the key
 * takes its turn in the ready queue, first ready first served. The bound (claim.lua's header):
 * a key that becomes ready behind R other keys is served within R × share admissions of the
 * ready pass. And the acceptance scenario: a burst of 10,000 entries on one key, published
 * before 100 on each of 9 others, does not keep the others waiting behind it — with one run,
 * the worst case (a second run finds the key busy and reads past the burst by itself), where
 * without a share the cold keys wait for all 10,000.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { flowQueueKey, flowReadyKey } from '../../src/entry/keys';
import { decodeText } from '../../src/ground/text';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds, type ClientKind } from '../support/clients';
import { runFleet } from '../support/flow-fleet';
import { claimOnce, fastConfig } from '../support/poller';
import { pendingRows } from '../support/redis';
import { useRedisPerTest } from '../support/redis-suite';

/**
 * The README's stated margin: the 9 cold keys finish while at least 8,000 of the hot key's
 * 10,000 entries still wait (measured: 1,315 handled, share 10 of a batch of 100).
 */
const HOT_HANDLED_WHEN_OTHERS_DONE_AT_MOST = 2_000;

describe.each(clientKinds)('fair batches over $name', (kind: ClientKind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (consumer: string, over: Partial<ConsumerConfigInput> = {}): ConsumerConfig =>
    parseConsumerConfig(fastConfig(stream, { consumer, batch: 100, concurrency: 8, flow: { limit: 1, order: 'strict', share: 10 }, ...over }));
  const lease = () => config('c').keys.flowLease;

  /** Appends `n` entries of `key` ('<key>:<i>' payloads) in one pipeline per thousand. */
  async function appendKeyed(key: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let first = 0; first < n; first += 1_000) {
      const pipeline = admin.pipeline();
      for (let i = first; i < Math.min(n, first + 1_000); i += 1) pipeline.xadd(stream, '*', 'event_id', `${key}-${i}`, 'payload', `${key}:${i}`, 'flow_key', key);
      for (const [error, id] of (await pipeline.exec())!) {
        if (error) throw error;
        ids.push(id as string);
      }
    }
    return ids;
  }

  it('admits at most the share of one key per claim and serves ready keys round robin: each within R × share ready admissions', async () => {
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
    const share = 2;
    const ids = new Map<string, string[]>();
    for (const key of keys) ids.set(key, await appendKeyed(key, 20));
    const a = config('a', { flow: { limit: 1, share } });
    const plan = { token: 'A.', leaseMs: 30_000, limit: 1, strict: false, share };

    // One read of everything: the share of each key is admitted, the rest parked, every key made ready in turn.
    const first = await claimOnce(port, a, { fresh: 200, reclaim: 0, flow: plan });
    expect(first.entries).toHaveLength(keys.length * share);
    expect(first.flowParked).toBe(120 - keys.length * share);
    expect(first.flowReadyMore).toBe(true);
    expect(await admin.zrange(flowReadyKey(lease()), 0, -1)).toEqual(keys);

    const admitted = new Map<string, string[]>(keys.map((key) => [key, []]));
    const record = (entries: ReadonlyArray<{ id: string; fields: ReadonlyMap<string, Uint8Array> }>) => {
      const order: string[] = [];
      for (const entry of entries) {
        const key = decodeText(entry.fields.get('flow_key')!);
        admitted.get(key)!.push(entry.id);
        order.push(key);
      }
      return order;
    };
    record(first.entries);

    // Then only the ready pass serves them: a claim with reclaim 8 and no fresh read has a ready room of 4.
    const served: string[] = [];
    for (let claim = 0; claim < 100 && served.length < 120 - keys.length * share; claim += 1) {
      const next = await claimOnce(port, a, { fresh: 0, reclaim: 8, flow: plan });
      const order = record(next.entries);
      expect(order.length, `claim ${claim}`).toBeLessThanOrEqual(4);
      for (const key of keys) expect(order.filter((k) => k === key).length, `${key} in claim ${claim}`).toBeLessThanOrEqual(share);
      served.push(...order);
    }
    expect(served).toHaveLength(120 - keys.length * share);

    // The bound: before each turn of a key, at most (R − 1) × share admissions of other keys
    // (every key was ready from the start, so R − 1 keys are ahead of it at worst).
    const bound = (keys.length - 1) * share;
    for (const key of keys) {
      let others = 0;
      for (const k of served) {
        if (k === key) others = 0;
        else expect((others += 1), `${key} waited`).toBeLessThanOrEqual(bound);
      }
    }
    // Nothing lost, nothing twice, and each key in id order.
    for (const key of keys) expect(admitted.get(key), key).toEqual(ids.get(key));
    expect(await admin.exists(flowReadyKey(lease()), flowQueueKey(lease()))).toBe(0);
  });

  it('drops a ready key of the earlier kind (an unordered set) instead of failing every claim, and its key’s entries still come back', async () => {
    await appendKeyed('k', 3);
    await admin.sadd(flowReadyKey(lease()), 'stale');
    const a = config('a', { flow: { limit: 1, share: 1 } });
    const plan = { token: 'A.', leaseMs: 30_000, limit: 1, strict: false, share: 1 };
    const first = await claimOnce(port, a, { fresh: 10, reclaim: 4, flow: plan });
    expect(first.entries).toHaveLength(1);
    expect(await admin.zrange(flowReadyKey(lease()), 0, -1)).toEqual(['k']);
    expect((await claimOnce(port, a, { fresh: 0, reclaim: 4, flow: plan })).entries).toHaveLength(1);
  });

  it('goes on draining while ready keys it made wait: one drain run handles a key’s whole backlog, the share at a time, in order', async () => {
    await appendKeyed('k', 60);
    const seen: number[] = [];
    const poller = createPoller({
      port,
      config: config('a', { batch: 10, flow: { limit: 1, order: 'strict', share: 3 } }),
      process: createProcessor(rawPayload, ({ payload }) => (seen.push(Number(decodeText(payload).split(':')[1])), 'committed')),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(report.flowParked).toBeGreaterThan(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });

  it('lets one run finish 9 cold keys while a 10,000-entry burst on one key published before them mostly waits, and loses nothing', async () => {
    const others = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'];
    await appendKeyed('H', 10_000);
    for (const key of others) await appendKeyed(key, 100);
    const committed = new Map<string, number[]>([['H', []], ...others.map((key): [string, number[]] => [key, []])]);
    let coldDone = 0;
    let hotWhenColdDone: number | undefined;
    const total = () => [...committed.values()].reduce((sum, list) => sum + new Set(list).size, 0);
    const reports = await runFleet({
      connect: () => kind.connect(),
      configs: [config('c1')],
      handle: async (text) => {
        const [key, n] = text.split(':') as [string, string];
        const list = committed.get(key)!;
        if (key !== 'H' && !list.includes(Number(n)) && ++coldDone === others.length * 100) hotWhenColdDone = new Set(committed.get('H')).size;
        list.push(Number(n));
        return 'committed';
      },
      done: () => total() >= 10_900,
      timeoutMs: 120_000,
    });

    expect(hotWhenColdDone, 'hot entries handled when the cold keys finished').toBeDefined();
    expect(hotWhenColdDone!).toBeLessThanOrEqual(HOT_HANDLED_WHEN_OTHERS_DONE_AT_MOST);
    // Each key in publish order. An entry comes again only right after itself: a run that stops
    // for its deadline retains what its handlers had not answered by then, whatever they return
    // (SPEC §5.1), and strict order keeps the key closed until that entry is handled again.
    let again = 0;
    for (const [key, list] of committed) {
      const firsts = list.filter((n, i) => i === 0 || n !== list[i - 1]);
      again += list.length - firsts.length;
      expect(firsts, key).toEqual(Array.from({ length: key === 'H' ? 10_000 : 100 }, (_, i) => i));
    }
    expect(again, 'entries handled again').toBeLessThanOrEqual(reports.reduce((sum, r) => sum + r.retained, 0));
    expect(total()).toBe(10_900);
    expect(reports.reduce((sum, r) => sum + r.flowParked, 0)).toBeGreaterThan(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(lease(), flowQueueKey(lease()), flowReadyKey(lease()))).toBe(0);
    console.info(`fair batches over ${kind.name}: ${hotWhenColdDone} of 10,000 hot entries handled when the 900 cold ones were done`);
  }, 150_000);
});
