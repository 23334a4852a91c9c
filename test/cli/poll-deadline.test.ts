/**
 * `saga-streams poll` as a separate process under a stalled Redis (issue 12 item 8): it
 * reports the failure and exits within its budget + 1 s, although a handler left work
 * behind that would keep the event loop alive and the connection has a request in flight.
 * And a --budget above the consumer's runBudgetMs is capped, with a line on stderr.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../../cli/run';
import { adminClient, pendingRows } from '../support/redis';
import { startTcpProxy } from '../support/tcp-proxy';
import { recordingIo, REPO_ROOT, TEST_KEY, writeFixtureConfig } from './fixture';

const BIN = join(REPO_ROOT, 'bin', 'saga-streams.mjs');
const EXIT_TIME = join(REPO_ROOT, 'test', 'cli', 'children', 'exit-time.cjs');

/** When the child's process exited, by its own clock (exit-time.cjs). */
function exitedAt(stderr: string): number {
  const at = /exit-at (\d+)/.exec(stderr);
  expect(at, stderr).not.toBeNull();
  return Number(at![1]);
}

/** Commits after 300 ms, leaving a 60 s timer behind (an abandoned resource). */
const LINGERING_HANDLER = `entryConsumer(async () => {
        setTimeout(() => {}, 60_000);
        await new Promise((resolve) => setTimeout(resolve, 300));
      })`;

describe('poll under a stalled Redis', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => admin.disconnect());

  it('exits with a failure within its budget + 1 s', async () => {
    const fixture = writeFixtureConfig(LINGERING_HANDLER);
    const env = { REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY };
    expect(await runCli(['--config', fixture.path, 'publish', 'thing.happened', '--id', 'stall-1', '--payload', 'x'], recordingIo(env))).toBe(0);

    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    const child = spawn(process.execPath, ['--require', EXIT_TIME, BIN, '--config', fixture.path, 'poll', 'things', '--budget', '3s', '--json'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', REDIS_URL: proxy.url, CLI_TEST_KEY: TEST_KEY },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));

    // Freeze the network once the run has claimed the entry: its settle gets no answer.
    while ((await pendingRows(admin, fixture.stream, fixture.group).catch(() => [])).length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const claimedAt = Date.now();
    proxy.freeze();
    const code = await exited;
    // The run started before the claim, so its deadline is at most claimedAt + 3 s.
    expect(exitedAt(stderr) - claimedAt).toBeLessThan(3_000 + 1_000);
    expect(code).toBe(1);
    expect(stderr).toMatch(/redis unreachable/);
    await proxy.close();
  }, 40_000);

  it('exits within its budget + 1 s when Redis is stalled from the start (no unbounded setup)', async () => {
    // The old CLI created the group first, with no deadline: it exited after 21 s on a 3 s budget.
    const fixture = writeFixtureConfig();
    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    proxy.freeze();
    const startedAt = Date.now();
    const child = spawn(process.execPath, ['--require', EXIT_TIME, BIN, '--config', fixture.path, 'poll', 'things', '--budget', '3s', '--json'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', REDIS_URL: proxy.url, CLI_TEST_KEY: TEST_KEY },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    // The process's start (node, the config) comes first; the run's deadline is at most start + 3 s.
    expect(exitedAt(stderr) - startedAt).toBeLessThan(3_000 + 1_000 + 2_000);
    expect(code).toBe(1);
    expect(stderr).toMatch(/redis unreachable/);
    await proxy.close();
  }, 40_000);

  it('caps a --budget above runBudgetMs, saying so on stderr', async () => {
    const fixture = writeFixtureConfig();
    const io = recordingIo({ REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY });
    expect(await runCli(['--config', fixture.path, 'poll', 'things', '--budget', '90s', '--json'], io)).toBe(0);
    expect(io.stderr).toContain(
      "saga-streams: --budget 90000 ms capped to the consumer's runBudgetMs (5000 ms); raise runBudgetMs (and minIdleMs above it) for longer runs",
    );
  });
});
