/**
 * `saga-streams publish --delay/--deliver-at` and `schedule list|cancel|move` end to end,
 * in-process, against the private Redis (SPEC §5.6): what each prints (JSON and human), its
 * exit code, and what Redis holds afterwards. A moved event is polled and acked.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runCli } from '../../cli/run';
import { scheduleKeys } from '../../src/entry/schedule-keys';
import { adminClient } from '../support/redis';
import { redisNow, untilRedisTime } from '../redis/schedule-fixtures';
import { recordingIo, TEST_KEY, writeFixtureConfig, type FixtureConfig } from './fixture';

describe('saga-streams schedule', () => {
  let fixture: FixtureConfig;
  let admin: Redis;
  const env = () => ({ REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY });
  const cli = async (...argv: string[]) => {
    const io = recordingIo(env());
    const code = await runCli(['--config', fixture.path, ...argv], io);
    return { code, io, json: () => io.json(), out: () => io.stdout.join('\n'), err: () => io.stderr.join('\n') };
  };

  beforeAll(() => {
    fixture = writeFixtureConfig();
    admin = adminClient();
  });
  afterAll(() => admin.disconnect());

  it('publishes for later, lists, cancels (once), and says what it could not cancel', async () => {
    const later = await cli('publish', 'thing.happened', '--id', 'later-1', '--payload', '{"n":1}', '--delay', '1h', '--json');
    expect(later.code).toBe(0);
    const [published] = later.json() as [Record<string, unknown>];
    expect(published).toMatchObject({ event_id: 'later-1', stream: fixture.stream, entry_id: null, duplicate: false, deliver_at: expect.any(String) });
    const human = await cli('publish', 'thing.happened', '--id', 'later-2', '--payload', '{"n":2}', '--deliver-at', '2099-01-01T00:00:00Z');
    // Further than 365 days ahead: refused before anything is sent, naming the option.
    expect(human.code).toBe(2);
    expect(human.err()).toContain('deliverAt must be at most 365 days from now');
    const soon = new Date(Date.now() + 30 * 60_000).toISOString();
    expect((await cli('publish', 'thing.happened', '--id', 'later-2', '--payload', '{"n":2}', '--deliver-at', soon)).out()).toContain(`later-2: scheduled on ${fixture.stream} for ${soon}`);
    expect(await admin.exists(fixture.stream)).toBe(0);

    const list = await cli('schedule', 'list', '--json');
    expect(list.code).toBe(0);
    const [rows] = list.json() as [Array<Record<string, unknown>>];
    expect(rows.map((r) => [r.event_id, r.event_type, r.stream])).toEqual([
      ['later-2', 'thing.happened', fixture.stream],
      ['later-1', 'thing.happened', fixture.stream],
    ]);
    expect(rows[1]!.deliver_at).toBe(published.deliver_at);
    expect((await cli('schedule', 'list')).out()).toMatch(/later-1 .* \(due in 59m\)/);
    expect((await cli('schedule', 'list', '--limit', '1', '--offset', '1', '--json')).json()).toEqual([[expect.objectContaining({ event_id: 'later-1' })]]);

    const cancel = await cli('schedule', 'cancel', 'later-1', '--json');
    expect(cancel.code).toBe(0);
    expect(cancel.json()).toEqual([[{ event_id: 'later-1', stream: fixture.stream, status: 'cancelled', deliver_at: published.deliver_at }]]);
    expect(await admin.zscore(scheduleKeys(fixture.stream).due, 'later-1')).toBeNull();
    const twice = await cli('schedule', 'cancel', 'later-1', 'nope');
    expect(twice.code).toBe(1);
    expect(twice.out()).toContain('later-1: not scheduled');
    expect(twice.out()).toContain('0 cancelled, 2 not');
  });

  it('moves due events on demand; the poll then handles them', async () => {
    const dueAt = new Date((await redisNow(admin)) + 700).toISOString();
    expect((await cli('publish', 'thing.happened', '--id', 'due-1', '--payload', '{"n":3}', '--deliver-at', dueAt)).code).toBe(0);
    const early = await cli('schedule', 'move', '--json');
    expect(early.json()).toEqual([[{ stream: fixture.stream, moved: 0, dropped: 0, next_deliver_at: expect.any(String) }]]);
    await untilRedisTime(admin, Date.parse(dueAt));
    const moved = await cli('schedule', 'move', '--stream', fixture.stream, '--max', '10');
    expect(moved.code).toBe(0);
    expect(moved.out()).toContain(`${fixture.stream}: moved 1, next due`);
    const poll = await cli('poll', 'things', '--json');
    expect(poll.json()).toMatchObject([{ acked: 1, deadLettered: 0 }]);
    const backlog = await cli('backlog');
    expect(backlog.out()).toMatch(/, scheduled \d+ \(next in \d+m\)$/);
  });

  it.each([
    [['schedule'], 'schedule needs a subcommand'],
    [['schedule', 'list', '--stream', 'nope'], '--stream "nope" is not a stream'],
    [['schedule', 'cancel'], 'schedule cancel needs event ids'],
    [['schedule', 'move', '--max', '0'], '--max must be an integer in 1..=10000'],
    [['publish', 'thing.happened', '--id', 'x', '--payload', '1', '--delay', '90'], '--delay must be a duration'],
    [['publish', 'thing.happened', '--id', 'x', '--payload', '1', '--delay', '1s', '--deliver-at', '2030-01-01T00:00:00Z'], 'not both'],
  ])('exits 2 on %j', async (argv, message) => {
    const run = await cli(...argv);
    expect(run.code).toBe(2);
    expect(run.err()).toContain(message);
  });
});
