/**
 * The CLI's commands end to end, in-process, against the private Redis: publish, poll,
 * backlog, trim, dead-letter listing and redrive (a record redriven after the "fix" is
 * acked), --json output and exit codes. State is read back from Redis directly.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runCli } from '../../cli/run';
import { adminClient, pendingIds } from '../support/redis';
import { recordingIo, REPO_ROOT, TEST_KEY, writeFixtureConfig, type FixtureConfig } from './fixture';

describe('saga-streams commands', () => {
  let fixture: FixtureConfig;
  let admin: Redis;
  const env = () => ({ REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY });
  const cli = async (...argv: string[]) => {
    const io = recordingIo(env());
    const code = await runCli(['--config', fixture.path, ...argv], io);
    return { code, io, json: () => io.json() };
  };

  beforeAll(() => {
    fixture = writeFixtureConfig();
    admin = adminClient();
  });
  afterAll(() => admin.disconnect());

  it('publishes signed events, reports a duplicate, and polls them (JSON output)', async () => {
    const first = await cli('publish', 'thing.happened', '--id', 'evt-1', '--payload', '{"n":1}', '--json');
    expect(first.code).toBe(0);
    expect(first.json()).toEqual([
      { event_id: 'evt-1', event_type: 'thing.happened', stream: fixture.stream, entry_id: expect.stringMatching(/^\d+-\d+$/), duplicate: false, producer: 'tester' },
    ]);
    const again = await cli('publish', 'thing.happened', '--id', 'evt-1', '--payload', '{"n":1}', '--json');
    expect(again.json()).toMatchObject([{ duplicate: true, entry_id: (first.json()[0] as { entry_id: string }).entry_id }]);
    const [entry] = await admin.xrange(fixture.stream, '-', '+');
    expect(entry?.[1]).toEqual(expect.arrayContaining(['event', 'thing.happened', 'event_id', 'evt-1', 'payload', '{"n":1}', 'key_id', 'k1', 'sig']));

    const before = await cli('backlog', '--json');
    expect(before.json()).toEqual([[{ consumer: 'things', stream: fixture.stream, group: 'things', status: 'no_group' }]]);

    const poll = await cli('poll', 'things', '--json');
    expect(poll.code).toBe(0);
    expect(poll.json()).toMatchObject([{ msg: 'poll run', job: 'poll', consumer: 'things', acked: 1, deadLettered: 0 }]);
    expect(await pendingIds(admin, fixture.stream, fixture.group)).toEqual([]);

    const after = await cli('backlog', '--json', 'things');
    expect(after.json()).toMatchObject([[{ consumer: 'things', status: 'ok', pending: 0, lag: 0, deadLetters: 0, streamLength: 1 }]]);
    const human = await cli('backlog');
    expect(human.io.stdout.join('\n')).toContain('pending 0');
  });

  it('lists a dead-lettered event, redrives it, and the redriven entry is acked', async () => {
    await cli('publish', 'thing.happened', '--id', 'bad-1', '--payload', 'reject-once');
    const poll = await cli('poll', 'things', '--json');
    expect(poll.json()).toMatchObject([{ deadLettered: 1, acked: 0 }]);

    const list = await cli('dlt', 'list', '--json');
    expect(list.code).toBe(0);
    const [records] = list.json() as [Array<Record<string, unknown>>];
    expect(records).toEqual([
      expect.objectContaining({ event_id: 'bad-1', event: 'thing.happened', reason: 'not_yet', stream: fixture.stream, group: 'things', deliveries: 1 }),
    ]);
    expect((await cli('dlt', 'list', '--json', '--reason', 'other')).json()).toEqual([[]]);
    expect((await cli('dlt', 'list', '--json', '--older-than', '1h')).json()).toEqual([[]]);
    expect((await cli('dlt', 'list', '--reason', 'not_yet')).io.stdout.join('\n')).toContain('bad-1');

    const id = records[0]!.id as string;
    const redrive = await cli('dlt', 'redrive', id, '--json');
    expect(redrive.code).toBe(0);
    expect(redrive.json()).toEqual([[{ id, status: 'redriven', entryId: expect.stringMatching(/^\d+-\d+$/), stream: fixture.stream }]]);
    expect(await admin.xlen(fixture.dlt)).toBe(0);

    const repoll = await cli('poll', 'things', '--json');
    expect(repoll.json()).toMatchObject([{ acked: 1, deadLettered: 0 }]);
    expect(await pendingIds(admin, fixture.stream, fixture.group)).toEqual([]);
    expect(await admin.xlen(fixture.dlt)).toBe(0);

    // Redrive is at most once per record: the second attempt finds nothing and fails.
    const twice = await cli('dlt', 'redrive', id, '--json');
    expect(twice.code).toBe(1);
    expect(twice.json()).toEqual([[{ id, status: 'missing', stream: fixture.stream }]]);
  });

  it('redrives every matching record with --all', async () => {
    await cli('publish', 'thing.happened', '--id', 'bad-2', '--payload', 'reject-once');
    await cli('publish', 'thing.happened', '--id', 'bad-3', '--payload', 'reject-once');
    await cli('poll', 'things');
    expect(await admin.xlen(fixture.dlt)).toBe(2);
    const none = await cli('dlt', 'redrive', '--all', '--reason', 'something_else', '--json');
    expect(none.json()).toEqual([[]]);
    const all = await cli('dlt', 'redrive', '--all', '--reason', 'not_yet');
    expect(all.code).toBe(0);
    expect(all.io.stdout.at(-1)).toBe('2 redriven, 0 not');
    expect((await cli('poll', 'things', '--json')).json()).toMatchObject([{ acked: 2 }]);
    expect(await admin.xlen(fixture.dlt)).toBe(0);
  });

  it('says why a record cannot be redriven, and keeps it', async () => {
    // What an older version wrote for an entry over 3,900 fields: a count of them, no fields.
    const id = (await admin.xadd(fixture.dlt, '*', 'event_id', 'wide-1', 'reason', 'r', 'source_stream', fixture.stream, 'group', 'things', 'source_entry_id', '1-1', 'orig_omitted_fields', '5002')) as string;
    const human = await cli('dlt', 'redrive', id);
    expect(human.code).toBe(1);
    expect(human.io.stdout).toEqual([`${id}: unrestorable (fields_omitted)`, '0 redriven, 1 not']);
    const json = await cli('dlt', 'redrive', id, '--json');
    expect(json.json()).toEqual([[{ id, status: 'unrestorable', reason: 'fields_omitted', stream: fixture.stream }]]);
    expect(await admin.xlen(fixture.dlt)).toBe(1);
    await admin.xdel(fixture.dlt, id);
  });

  it('trims what every group has acknowledged', async () => {
    await cli('publish', 'thing.happened', '--id', 'evt-trim', '--payload', 'x');
    await cli('poll', 'things');
    const lengthBefore = await admin.xlen(fixture.stream);
    const trim = await cli('trim', '--json');
    expect(trim.code).toBe(0);
    const [line] = trim.json() as [{ job: string; removed: number; detail: { streams: Array<{ stream: string; status: string }> } }];
    expect(line).toMatchObject({ job: 'trim', detail: { streams: [{ stream: fixture.stream, status: 'trimmed' }] } });
    expect(line.removed).toBeGreaterThan(0);
    expect(await admin.xlen(fixture.stream)).toBe(lengthBefore - line.removed);
  });

  it('exits 2 on usage errors, with a JSON error line under --json', async () => {
    const cases: string[][] = [
      ['frobnicate'],
      ['poll'],
      ['poll', 'nobody'],
      ['poll', 'things', '--mode', 'sometimes'],
      ['backlog', '--stream', 'x'],
      ['dlt'],
      ['dlt', 'list', '--older-than', 'ten minutes'],
      ['dlt', 'list', '--older-than', '90'],
      ['poll', 'things', '--budget', '1500'],
      ['dlt', 'redrive'],
      ['dlt', 'redrive', '1-1', '--all'],
      ['publish', 'thing.happened', '--payload', 'x'],
      ['publish', 'unknown.type', '--id', 'e', '--payload', 'x'],
      ['publish', 'thing.happened', '--id', 'has space', '--payload', 'x'],
      ['publish', 'thing.happened', '--id', 'e-fk', '--payload', 'x', '--flow-key', ''],
    ];
    for (const argv of cases) {
      const { code, io } = await cli(...argv);
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(io.stderr.join('\n')).toContain('--help');
    }
    const json = await cli('poll', 'nobody', '--json');
    expect(json.json()).toEqual([{ error: { code: 'CLI_USAGE', message: expect.stringContaining('things') } }]);
    const missing = await runCli(['--config', '/nonexistent/saga.config.ts', 'backlog'], recordingIo(env()));
    expect(missing).toBe(2);
  });

  it('publishes --flow-key as the entry\'s flow_key field', async () => {
    expect((await cli('publish', 'thing.happened', '--id', 'evt-flow', '--payload', '{}', '--flow-key', 'inst-7')).code).toBe(0);
    const entries = await admin.xrange(fixture.stream, '-', '+');
    const fields = entries.find(([, f]) => f.includes('evt-flow'))![1];
    expect(fields.slice(0, 8)).toEqual(['event', 'thing.happened', 'event_id', 'evt-flow', 'payload', '{}', 'flow_key', 'inst-7']);
  });

  it('exits 1 when the command fails: no Redis URL, or a missing secret — naming the variable, never a value', async () => {
    const noRedis = recordingIo({ CLI_TEST_KEY: TEST_KEY });
    expect(await runCli(['--config', fixture.path, 'backlog'], noRedis)).toBe(1);
    expect(noRedis.stderr.join('\n')).toContain('REDIS_URL');
    const noKey = recordingIo({ REDIS_URL: inject('redisUrl') });
    expect(await runCli(['--config', fixture.path, 'poll', 'things', '--json'], noKey)).toBe(1);
    expect(noKey.json()).toEqual([{ error: { code: 'CONFIG_INVALID', message: expect.stringContaining('CLI_TEST_KEY') } }]);
    const withKey = recordingIo({ REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY });
    await runCli(['--config', fixture.path, 'poll', 'things', '--json'], withKey);
    expect([...withKey.stdout, ...withKey.stderr, ...noKey.stdout, ...noKey.stderr].join('\n')).not.toContain(TEST_KEY.slice(4, 20));
  });

  it('asks for a unit on a bare number of a duration', async () => {
    const { code, io } = await cli('poll', 'things', '--budget', '90');
    expect(code).toBe(2);
    expect(io.stderr.join('\n')).toContain('--budget needs a unit: 90ms, 90s');
  });

  it('prints its version, and scaffolds a project with init (refusing to overwrite it)', async () => {
    const version = recordingIo(env());
    expect(await runCli(['--version'], version)).toBe(0);
    expect(version.stdout).toEqual([JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version]);
    const dir = mkdtempSync(join(tmpdir(), 'saga-streams-init-'));
    try {
      // A bad --dependency is a usage error naming it, and writes nothing.
      const bad = recordingIo(env(), dir);
      expect(await runCli(['init', 'shop', '--dependency', 'file:./nowhere.tgz'], bad)).toBe(2);
      expect(bad.stderr.join('\n')).toContain(`--dependency "file:./nowhere.tgz": ${join(dir, 'nowhere.tgz')} does not exist`);
      expect(existsSync(join(dir, 'shop'))).toBe(false);
      // (Without --dependency, init from this checkout would build and pack it: scaffold-journey.test.ts.)
      const init = recordingIo(env(), dir);
      expect(await runCli(['init', 'shop', '--platform', 'cloudflare', '--dependency', '^0.1.0'], init)).toBe(0);
      const pkg = JSON.parse(readFileSync(join(dir, 'shop', 'package.json'), 'utf8'));
      expect(pkg.dependencies['saga-streams']).toBe('^0.1.0');
      expect(init.stdout.join('\n')).not.toContain('not on the npm registry');
      expect(readFileSync(join(dir, 'shop', 'README.md'), 'utf8')).toContain('`package.json` depends on saga-streams `^0.1.0` from the npm registry.');
      expect(readFileSync(join(dir, 'shop', 'wrangler.toml'), 'utf8')).toContain('main = "src/worker.ts"');
      const again = recordingIo(env(), dir);
      expect(await runCli(['init', 'shop', '--platform', 'cloudflare', '--dependency', 'latest'], again)).toBe(2);
      expect(again.stderr.join('\n')).toContain('not overwriting');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints help with the exit codes and exits 0', async () => {
    const io = recordingIo(env());
    expect(await runCli(['--help'], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/Exit codes:[\s\S]*0\s+success[\s\S]*1\s+failure[\s\S]*2\s+usage/);
  });
});
