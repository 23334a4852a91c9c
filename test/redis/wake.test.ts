/**
 * An idle continuous run over TCP waits in a blocking read (XREADGROUP … BLOCK) on a
 * connection of its own. Entries
 * another consumer of its group reads must not wake it once each (issue 12 item 13), and an
 * entry meant for it arrives in the reply that wakes it, with no second round trip to claim
 * it (issue 15: publish → handler latency).
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { ioredisKind } from '../support/clients';
import { fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append } from '../support/redis';

describe('waiting for entries (ioredis)', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  it('wakes once, not once per entry, for a burst another consumer reads', async () => {
    const metered = meterPort(port);
    const seen: string[] = [];
    const poller = createPoller({ port: metered, config: fastConfig(stream, { blockMs: 5_000 }), process: recordingProcessor(seen) });
    const running = poller.run({ mode: 'continuous', deadline: Date.now() + 1_500 });
    await sleepMs(150); // the run found nothing and waits

    // 30 entries appended and read by consumer B in one transaction: none is left for us.
    const burst = admin.multi();
    for (let i = 0; i < 30; i += 1) burst.xadd(stream, '*', 'event_id', `e${i}`, 'payload', `p${i}`);
    burst.xreadgroup('GROUP', 'g', 'B', 'COUNT', 100, 'STREAMS', stream, '>');
    await burst.exec();

    const report = await running;
    expect(seen).toEqual([]);
    // claim, wait (woken), claim, wait until the deadline, maybe one last claim: ≈ 5, was ≈ 62.
    expect(metered.roundTrips).toBeLessThanOrEqual(6);
    expect(report.roundTrips).toBe(metered.roundTrips);
  });

  it('hands an entry appended during the wait to the handler with no further round trip', async () => {
    const metered = meterPort(port);
    const stop = new AbortController();
    let roundTripsAtHandling = -1;
    const poller = createPoller({
      port: metered,
      config: fastConfig(stream, { blockMs: 5_000 }),
      process: recordingProcessor([], () => {
        roundTripsAtHandling = metered.roundTrips;
        stop.abort();
        return 'committed';
      }),
    });
    const running = poller.run({ mode: 'continuous', signal: stop.signal });
    await sleepMs(150); // the run found nothing and waits
    const waiting = metered.roundTrips;
    await append(admin, stream, { event_id: 'e1', payload: 'p1' });
    const report = await running;
    expect(report.acked).toBe(1);
    expect(roundTripsAtHandling).toBe(waiting);
  });

  it('costs two round trips per entry at a low rate: the wait on its own connection, then settle and claim together', async () => {
    const metered = meterPort(port);
    const stop = new AbortController();
    const seen: string[] = [];
    const poller = createPoller({
      port: metered,
      config: fastConfig(stream, { blockMs: 5_000 }),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'p4') stop.abort();
        return 'committed';
      }),
    });
    const running = poller.run({ mode: 'continuous', signal: stop.signal });
    await sleepMs(150); // the run found nothing and waits
    const waiting = metered.roundTrips;
    for (let i = 0; i < 5; i += 1) {
      await append(admin, stream, { event_id: `e${i}`, payload: `p${i}` });
      while (seen.length <= i) await sleepMs(2);
    }
    const report = await running;
    expect(report.acked).toBe(5);
    // The wait in flight brings p0. Per entry then: one exchange settles it and claims (the
    // reclaim and a fresh read that finds nothing yet), one wait brings the next — the wait
    // runs on a connection of its own (SPEC §5.1 "Blocking reads"), so it cannot share the
    // settle's round trip. The last entry's settle goes out with the final exchange.
    expect(metered.roundTrips - waiting).toBeLessThanOrEqual(2 * 5);
  });

  it('still wakes for an entry meant for it after skipping a foreign burst', async () => {
    const seen: string[] = [];
    const stop = new AbortController();
    const poller = createPoller({
      port,
      config: fastConfig(stream, { blockMs: 5_000 }),
      process: recordingProcessor(seen, () => {
        stop.abort();
        return 'committed';
      }),
    });
    const started = Date.now();
    const running = poller.run({ mode: 'continuous', signal: stop.signal });
    await sleepMs(150);
    const burst = admin.multi();
    for (let i = 0; i < 5; i += 1) burst.xadd(stream, '*', 'event_id', `e${i}`, 'payload', `p${i}`);
    burst.xreadgroup('GROUP', 'g', 'B', 'COUNT', 100, 'STREAMS', stream, '>');
    await burst.exec();
    await sleepMs(150);
    await append(admin, stream, { event_id: 'mine', payload: 'mine' });
    await running;
    expect(seen).toEqual(['mine']);
    expect(Date.now() - started).toBeLessThan(2_000); // woken by it, not by the 5 s block timing out
  });
});
