/**
 * The bounds of the move of due scheduled events inside a poll run's claim (SPEC §5.6):
 * - a Redis over maxmemory refuses the move's XADD; the claim around it still works (the run
 *   handles and acks what is already in the stream) and the event stays scheduled, moved once
 *   memory allows — on a private server, so its maxmemory disturbs no other suite (fails on
 *   the claim.lua of 3f8324e, whose refused XADD failed the whole claim);
 * - a group that does not exist yet gets nothing moved ahead of it: a consumer that starts
 *   from '$' would begin past the moved event and never see it;
 * - one claim moves about its byte allowance of large events, not the whole due backlog.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RedisProcess } from '../../local/redis-server';
import { createPoller } from '../../src/consume/poller';
import { Deferral } from '../../src/verdict/verdict';
import { createPublisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { moveDueEvents } from '../../src/schedule/move';
import { fastConfig, recordingProcessor } from '../support/poller';
import { scheduleOf, untilRedisTime } from './schedule-fixtures';
import { usePrivateRedis } from '../support/redis-suite';

const AUTH = { mode: 'exclusive-stream', producer: 'shop' } as const;

describe('the move of due scheduled events, bounded (ioredis, private server)', () => {
  let server: RedisProcess;
  let admin: Redis;
  let port: RedisPort;
  let n = 0;
  const fresh = () => `bounds-${++n}`;
  usePrivateRedis((h) => {
    ({ server, admin } = h);
    port = connectIoredis(server.url);
  });
  afterEach(async () => {
    await admin.config('SET', 'maxmemory', '0');
  });
  afterAll(async () => {
    await port.close();
  });

  const schedule = (stream: string, eventId: string, delayMs: number, payload: string = eventId) =>
    createPublisher({ port, routes: { placed: stream }, auth: AUTH }).publish({ eventType: 'placed', eventId, payload }, { delayMs });
  const publishNow = (stream: string, eventId: string) =>
    createPublisher({ port, routes: { placed: stream }, auth: AUTH }).publish({ eventType: 'placed', eventId, payload: eventId });

  it('over maxmemory: the run handles and acks what the stream holds; the due event stays scheduled and moves once memory allows', async () => {
    const stream = fresh();
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    await publishNow(stream, 'now-1');
    const due = (await schedule(stream, 'later-1', 300)).scheduled!;
    await untilRedisTime(admin, due.deliverAtMs);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');

    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor(seen) });
    // One round: the first claim reads through the script (no size evidence yet). A later claim
    // would read natively inside MULTI, which a Redis over maxmemory refuses whole — with or
    // without a schedule, so that is not what this test is about.
    const starved = await poller.run({ mode: 'drain', maxRounds: 1 });
    expect(seen).toEqual(['now-1']);
    expect(starved).toMatchObject({ acked: 1, scheduledMoved: 0 });
    expect([...(await scheduleOf(admin, stream)).due.keys()]).toEqual(['later-1']);
    expect(await admin.xpending(stream, 'g')).toEqual([0, null, null, null]);

    await admin.config('SET', 'maxmemory', '0');
    const after = await poller.run({ mode: 'drain' });
    expect(seen).toEqual(['now-1', 'later-1']);
    expect(after).toMatchObject({ acked: 1, scheduledMoved: 1 });
    expect((await scheduleOf(admin, stream)).due.size).toBe(0);
  });

  it('over maxmemory: a deferral whose not-before Redis refuses to store leaves its entry pending, and the settle stands', async () => {
    const stream = fresh();
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    await publishNow(stream, 'busy-1');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    const process = recordingProcessor([], () => Promise.reject(new Deferral('rate limited', { retryAfterMs: 60_000 })));
    const report = await createPoller({ port, config: fastConfig(stream), process }).run({ mode: 'drain', maxRounds: 1 });
    expect(report).toMatchObject({ acked: 0, retained: 1 });
    expect((await admin.xpending(stream, 'g'))[0]).toBe(1);
  });

  it("moves nothing into a stream whose group does not exist yet: a consumer starting from '$' still gets the event", async () => {
    const stream = fresh();
    const due = (await schedule(stream, 'first-due', 200)).scheduled!;
    await untilRedisTime(admin, due.deliverAtMs);
    const seen: string[] = [];
    const report = await createPoller({ port, config: fastConfig(stream, { startFrom: '$' }), process: recordingProcessor(seen) }).run({ mode: 'drain' });
    expect(seen).toEqual(['first-due']);
    expect(report).toMatchObject({ acked: 1, scheduledMoved: 1 });
  });

  it('moves about a byte allowance per call: a due backlog of large events goes over several calls, in due order', async () => {
    const stream = fresh();
    const big = 'x'.repeat(256 * 1024);
    for (let i = 0; i < 8; i++) await schedule(stream, `big-${i}`, 100 + i, big);
    await untilRedisTime(admin, (await admin.time().then(([s, us]) => Number(s) * 1000 + Math.floor(Number(us) / 1000))) + 150);

    const first = await moveDueEvents(port, stream, { maxMoved: 100, maxBytes: 600 * 1024 });
    expect(first.moved).toBe(2);
    const alone = await moveDueEvents(port, stream, { maxMoved: 100, maxBytes: 1 });
    expect(alone.moved).toBe(1);
    const rest = await moveDueEvents(port, stream, { maxMoved: 100 });
    expect(rest.moved).toBe(5);
    const moved = (await admin.xrange(stream, '-', '+')) as Array<[string, string[]]>;
    expect(moved.map(([, fields]) => fields[fields.indexOf('event_id') + 1])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `big-${i}`));
  });
});
