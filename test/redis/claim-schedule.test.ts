/**
 * Poll runs move due scheduled events (SPEC §5.6: "the move runs inside every poll run's claim
 * script"): claim.lua appends them before its fresh read, so the run that moves an event also
 * handles it; an empty or not-yet-due schedule costs no extra command, and the claim reports
 * the schedule's next due time so a poller can be woken then.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { idMillis, scheduleOf, untilRedisTime } from './schedule-fixtures';

const AUTH = { mode: 'exclusive-stream', producer: 'shop' } as const;

describe.each(clientKinds)('poll runs move due scheduled events over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');

  const schedule = async (eventId: string, delayMs: number) =>
    (await createPublisher({ port, routes: { placed: stream }, auth: AUTH }).publish({ eventType: 'placed', eventId, payload: eventId }, { delayMs })).scheduled!;

  it('moves the due events in its claim and handles them in the same run; the later one waits, its due time reported', async () => {
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    const a = await schedule('a', 600);
    const b = await schedule('b', 700);
    // Due before minIdle (10 s) runs out: a claim ahead that sees a and b still in flight
    // reports their reclaim time, minIdle away, and the report keeps the earliest time seen.
    const later = await schedule('later', 6_000);
    await untilRedisTime(admin, b.deliverAtMs);

    const seen: string[] = [];
    const report = await createPoller({ port, config: fastConfig(stream), process: recordingProcessor(seen) }).run({ mode: 'drain' });
    expect(seen).toEqual(['a', 'b']);
    expect(report).toMatchObject({ acked: 2, scheduledMoved: 2, nextDueAt: later.deliverAtMs });
    const entries = (await admin.xrange(stream, '-', '+')) as Array<[string, string[]]>;
    expect(entries.map(([id]) => idMillis(id) >= a.deliverAtMs)).toEqual([true, true]);
    expect([...(await scheduleOf(admin, stream)).due.keys()]).toEqual(['later']);
  });

  it('costs an idle run nothing more with a schedule that is not due: one command, the next due time in its report', async () => {
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    const later = await schedule('later', 3_600_000);
    const metered = meterPort(port);
    const report = await createPoller({ port: metered, config: fastConfig(stream), process: recordingProcessor([]) }).run({ mode: 'drain' });
    expect(metered.roundTrips).toBe(1);
    expect(report).toMatchObject({ handled: 0, scheduledMoved: 0, nextDueAt: later.deliverAtMs });
    expect(await admin.exists(stream)).toBe(1);
    expect(await admin.xlen(stream)).toBe(0);
  });
});
