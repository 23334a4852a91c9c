/**
 * The rate limit across the fleet (SPEC §5.7, config rateLimit) against Redis: GCRA in the
 * claim script on the Redis clock. A claim takes no more than the bucket's room and says
 * when the next entry may start; concurrent runs together start no more than burst + W / T
 * entries in any window of W ms; entries over the limit wait unread, never dead-lettered; a
 * continuous run waits for the bucket, not for its blockMs.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConsumerConfig, type ConsumerConfigInput } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { flowRateKey } from '../../src/entry/keys';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds, type ClientKind } from '../support/clients';
import { runFleet } from '../support/flow-fleet';
import { claimOnce, fastConfig } from '../support/poller';
import { append, pendingRows } from '../support/redis';
import { useRedisPerTest } from '../support/redis-suite';
import { consumerBacklog } from '../../src/deployment/consumer-backlog';
import { probePlan } from '../support/backlog';

describe.each(clientKinds)('rate limit over $name', (kind: ClientKind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (consumer: string, rateLimit: ConsumerConfigInput['rateLimit'], over: Partial<ConsumerConfigInput> = {}) =>
    parseConsumerConfig(fastConfig(stream, { consumer, batch: 20, concurrency: 8, rateLimit, ...over }));
  const appendMany = async (n: number) => {
    for (let i = 0; i < n; i += 1) await append(admin, stream, { event_id: `e-${i}`, payload: `p:${i}` });
  };

  it('takes no more than the bucket’s room, and says when the next entry may start', async () => {
    await appendMany(10);
    const limited = config('c', { limit: 10, perMs: 1_000, burst: 3 });
    const first = await claimOnce(port, limited, { fresh: 10, reclaim: 0 });
    expect(first.entries).toHaveLength(3);
    expect(first.rateLimited).toBe(true);
    const second = await claimOnce(port, limited, { fresh: 10, reclaim: 0 });
    expect(second.entries).toEqual([]);
    expect(second.rateLimited).toBe(true);
    // The bucket's next start: one interval (100 ms) after the burst, on the Redis clock.
    expect(second.nextDueAt! - second.redisNow!).toBeGreaterThan(0);
    expect(second.nextDueAt! - second.redisNow!).toBeLessThanOrEqual(100);
    expect(await admin.pttl(flowRateKey(limited.keys.flowLease))).toBeGreaterThan(0);
    // Nothing over the limit was read: 3 delivered, 7 unread; none dead-lettered.
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(3);
    expect(await admin.xlen(limited.keys.dlt)).toBe(0);
  });

  it('says in the backlog when a full bucket has room again', async () => {
    await appendMany(3);
    const limited = config('c', { limit: 1, perMs: 10_000 });
    expect((await claimOnce(port, limited, { fresh: 3, reclaim: 0 })).entries).toHaveLength(1);
    const probed = await consumerBacklog(port, probePlan('c', limited));
    if (probed.status !== 'ok') throw new Error(`no group: ${probed.status}`);
    // One start took the bucket's one token: room again 10 s after the claim, on the Redis clock.
    expect(probed.rateLimitRoomInMs).toBeGreaterThan(8_000);
    expect(probed.rateLimitRoomInMs).toBeLessThanOrEqual(10_000);
    expect(probed.lag).toBe(2);
    expect(probed.flow!.limitedKeys).toEqual([]);
  });

  it('holds 4 concurrent runs to burst + W / T starts in any window, and starts them all in time', async () => {
    await appendMany(80);
    const rate = { limit: 20, perMs: 1_000, burst: 5 };
    const starts: number[] = [];
    const began = performance.now();
    await runFleet({
      connect: () => kind.connect(),
      configs: [1, 2, 3, 4].map((i) => config(`c${i}`, rate)),
      handle: async () => {
        starts.push(performance.now());
        return 'committed';
      },
      done: () => starts.length >= 45,
      timeoutMs: 10_000,
    });
    const elapsed = performance.now() - began;
    // T = 50 ms. A start follows its claim's admission by one exchange at most (D, 250 ms here).
    const intervalMs = 50;
    const slackMs = 250;
    starts.sort((a, b) => a - b);
    for (let i = 0; i < starts.length; i += 1) {
      const inWindow = starts.filter((t) => t >= starts[i]! && t < starts[i]! + 1_000).length;
      expect(inWindow, `starts in the second after start ${i}`).toBeLessThanOrEqual(rate.burst + Math.ceil((1_000 + slackMs) / intervalMs));
    }
    // Not slow by accident either: 45 starts take about (45 − burst) × T = 2 s.
    expect(elapsed).toBeGreaterThanOrEqual((45 - rate.burst - 1) * intervalMs - slackMs);
    expect(elapsed).toBeLessThan(6_000);
  }, 15_000);

  it('lets a continuous run wait for the bucket, not for its blockMs', async () => {
    await appendMany(30);
    let handled = 0;
    const poller = createPoller({
      port,
      config: config('c', { limit: 10, perMs: 1_000, burst: 1 }, { blockMs: 5_000 }),
      process: createProcessor(rawPayload, () => ((handled += 1), 'committed')),
    });
    const report = await poller.run({ mode: 'continuous', deadline: Date.now() + 1_200 });
    // One start per 100 ms for about 1.1 s of handling time; a wait of blockMs would allow one or two.
    expect(handled).toBeGreaterThanOrEqual(6);
    expect(handled).toBeLessThanOrEqual(13);
    expect(report.acked).toBe(handled);
  });
});
