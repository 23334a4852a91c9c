/**
 * The EVALSHA → NOSCRIPT → EVAL fallback, on a private server so flushing its script cache
 * cannot disturb the round-trip counts of suites running in parallel.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisProcess } from '../../local/redis-server';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { meterPort } from '../../src/redis/metered';
import { fastConfig, recordingProcessor } from '../support/poller';
import { usePrivateRedis } from '../support/redis-suite';

describe('script cache flushed (ioredis, private server)', () => {
  let server: RedisProcess;
  let admin: Redis;
  usePrivateRedis((h) => ({ server, admin } = h));

  it('keeps working after SCRIPT FLUSH, loading the scripts again', async () => {
    const port = meterPort(connectIoredis(server.url));
    await ensureGroup(port, 's', 'g', '0-0');
    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig('s'), process: recordingProcessor(seen) });
    for (const round of [1, 2]) {
      await admin.script('FLUSH');
      await admin.xadd('s', '*', 'event_id', `e${round}`, 'payload', `p${round}`);
      const before = port.roundTrips;
      const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
      expect(report.acked).toBe(1);
      // claim + settle, each followed by one EVAL after its NOSCRIPT
      expect(port.roundTrips - before).toBe(4);
    }
    expect(seen).toEqual(['p1', 'p2']);
    expect(await admin.xpending('s', 'g')).toEqual([0, null, null, null]);
    const warm = port.roundTrips;
    await admin.xadd('s', '*', 'event_id', 'e3', 'payload', 'p3');
    await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
    expect(port.roundTrips - warm).toBe(2);
    await port.close();
  });
});
