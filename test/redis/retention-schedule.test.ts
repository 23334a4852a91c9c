/**
 * The trim run moves due scheduled events (SPEC §5.6: "the move runs … in the trim run"), in
 * its one retention.lua call per stream: a stream nobody polls still gets its due events,
 * never before their due time by the Redis clock, and the events not yet due stay scheduled.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { parseRetentionConfig } from '../../src/retention/config';
import { runRetention } from '../../src/retention/run';
import { clientKinds } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { idMillis, scheduleOf, untilRedisTime } from './schedule-fixtures';
import { entriesOf } from './stream-entries';

const HMAC = { mode: 'hmac', keyId: 'k1', key: 'retention-schedule-signing-key-1' } as const;

describe.each(clientKinds)('the trim run moves due scheduled events over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');

  it('appends the due ones in the same call as the trim, and reports the next due time', async () => {
    const publisher = createPublisher({ port, routes: { placed: stream }, auth: HMAC });
    const soon = await publisher.publish({ eventType: 'placed', eventId: 'soon', payload: 'a' }, { delayMs: 700 });
    const later = await publisher.publish({ eventType: 'placed', eventId: 'later', payload: 'b' }, { delayMs: 3_600_000 });
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    const config = parseRetentionConfig({ stream });

    const early = await runRetention(port, config);
    expect(early.schedule).toEqual({ moved: 0, nextDueMs: soon.scheduled!.deliverAtMs, dropped: 0 });
    expect(await admin.xlen(stream)).toBe(0);

    await untilRedisTime(admin, soon.scheduled!.deliverAtMs);
    const metered = meterPort(port);
    const report = await runRetention(metered, config);
    // One call for the move, the trim, DLT retention and the reaper together.
    expect(metered.roundTrips).toBe(1);
    expect(report.schedule).toEqual({ moved: 1, nextDueMs: later.scheduled!.deliverAtMs, dropped: 0 });
    const entries = await entriesOf(admin, stream);
    expect(entries.map(([, fields]) => fields.get('event_id')?.toString())).toEqual(['soon']);
    expect(idMillis(entries[0]![0])).toBeGreaterThanOrEqual(soon.scheduled!.deliverAtMs);
    expect([...(await scheduleOf(admin, stream)).due.keys()]).toEqual(['later']);
  });

  it("moves nothing into a stream no group reads yet: a consumer that starts from '$' afterwards still gets the event", async () => {
    const publisher = createPublisher({ port, routes: { placed: stream }, auth: HMAC });
    const soon = await publisher.publish({ eventType: 'placed', eventId: 'soon', payload: 'a' }, { delayMs: 300 });
    await untilRedisTime(admin, soon.scheduled!.deliverAtMs);
    const report = await runRetention(port, parseRetentionConfig({ stream }));
    expect(report.schedule).toEqual({ moved: 0, nextDueMs: soon.scheduled!.deliverAtMs, dropped: 0 });
    expect(await admin.exists(stream)).toBe(0);

    const seen: string[] = [];
    const run = await createPoller({ port, config: fastConfig(stream, { startFrom: '$' }), process: recordingProcessor(seen) }).run({ mode: 'drain' });
    expect(seen).toEqual(['a']);
    expect(run).toMatchObject({ acked: 1, scheduledMoved: 1 });
  });
});
