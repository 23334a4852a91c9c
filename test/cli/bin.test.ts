/**
 * The installed command (`bin/saga-streams.mjs`, TypeScript through tsx) as a script sees
 * it: a separate process, exit codes, JSON on stdout, messages on stderr.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { REPO_ROOT, TEST_KEY, writeFixtureConfig } from './fixture';

const BIN = join(REPO_ROOT, 'bin', 'saga-streams.mjs');

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bin/saga-streams.mjs', () => {
  it('publishes and prints the result as JSON, exit 0', async () => {
    const fixture = writeFixtureConfig();
    const env = { REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY };
    const published = await run(['publish', 'thing.happened', '--id', 'bin-1', '--payload', 'hi', '--json', '--config', fixture.path], env);
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ event_id: 'bin-1', stream: fixture.stream, duplicate: false });
  });

  it('exits 2 on a usage error, with the message on stderr and nothing on stdout', async () => {
    const result = await run(['poll', '--bogus'], {});
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain("Unknown option '--bogus'");
  });
});
