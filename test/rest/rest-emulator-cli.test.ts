/**
 * `saga-streams rest-emulator`: the development REST emulator as a command. It serves the
 * Upstash protocol in front of REDIS_URL with the token it prints for `.dev.vars` (or the
 * config's token variable, never printed), and stops on the stop signal, exiting 0.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { runCli } from '../../cli/run';
import { command } from '../../src/redis/port';
import { runCommand } from '../../src/redis/script';
import { connectUpstash } from '../../src/redis/upstash-port';
import { adminClient, uniquePrefix } from '../support/redis';
import { recordingIo, TEST_KEY, writeFixtureConfig } from '../cli/fixture';

async function serving(env: Record<string, string>, extra: string[] = []) {
  const stop = new AbortController();
  const io = { ...recordingIo({ REDIS_URL: inject('redisUrl'), CLI_TEST_KEY: TEST_KEY, ...env }), signal: stop.signal };
  const exited = runCli(['--config', writeFixtureConfig().path, 'rest-emulator', '--port', '0', ...extra], io);
  while (io.stdout.length === 0) {
    if (io.stderr.some((line) => line.startsWith('saga-streams: '))) throw new Error(io.stderr.join('\n'));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { url } = JSON.parse(io.stdout[0]!) as { url: string };
  return { io, url, stop: async () => (stop.abort(), await exited) };
}

describe('saga-streams rest-emulator', () => {
  let admin: Redis;
  beforeAll(() => void (admin = adminClient()));
  afterAll(() => admin.disconnect());

  it('serves the REST protocol in front of REDIS_URL with the token it prints, and exits 0 when stopped', async () => {
    const { io, url, stop } = await serving({});
    const tokenLine = io.stderr.find((line) => line.includes('UPSTASH_REDIS_REST_TOKEN='))!;
    const token = tokenLine.split('=')[1]!;
    expect(io.stderr).toContain(`    UPSTASH_REDIS_REST_URL=${url}`);
    const key = `${uniquePrefix()}:through-rest`;
    const port = connectUpstash({ url, token });
    await runCommand(port, command('SET', key, 'bytes'));
    expect(await admin.get(key)).toBe('bytes');
    await expect(runCommand(connectUpstash({ url, token: 'wrong' }), command('PING'))).rejects.toThrow();
    expect(await stop()).toBe(0);
  });

  it('uses the config\'s token variable when set, without printing it', async () => {
    const token = 'token-from-the-environment-0123';
    const { io, url, stop } = await serving({ UPSTASH_REDIS_REST_TOKEN: token });
    expect(io.stderr.join('\n')).not.toContain(token);
    expect(Buffer.from((await runCommand(connectUpstash({ url, token }), command('PING'))) as Uint8Array).toString()).toBe('PONG');
    expect(await stop()).toBe(0);
  });

  it('--dev-vars writes the Worker\'s .dev.vars (0600): REST URL and token, and the config\'s secrets, none of them printed', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rest-emulator-')), '.dev.vars');
    const { io, url, stop } = await serving({}, ['--dev-vars', file]);
    const vars = Object.fromEntries(readFileSync(file, 'utf8').trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(vars).toMatchObject({ UPSTASH_REDIS_REST_URL: url, CLI_TEST_KEY: TEST_KEY });
    expect(vars.REDIS_URL).toBeUndefined();
    expect(Buffer.from((await runCommand(connectUpstash({ url, token: vars.UPSTASH_REDIS_REST_TOKEN! }), command('PING'))) as Uint8Array).toString()).toBe('PONG');
    expect(io.stderr.join('\n')).not.toContain(TEST_KEY);
    expect(io.stderr.join('\n')).not.toContain(vars.UPSTASH_REDIS_REST_TOKEN!);
    expect(await stop()).toBe(0);
  });

  it('a REDIS_URL whose password holds "," is one server, not a Cluster list; one that does not parse fails without its password', async () => {
    const withComma = inject('redisUrl').replace('redis://', 'redis://:Hunter2,Secret9@');
    const { stop } = await serving({ REDIS_URL: withComma });
    expect(await stop()).toBe(0);
    const io = recordingIo({ REDIS_URL: 'redis://:Hunter2,Secret9@127.0.0.1:99999', CLI_TEST_KEY: TEST_KEY });
    expect(await runCli(['--config', writeFixtureConfig().path, '--json', 'rest-emulator', '--port', '0'], io)).toBe(1);
    expect(io.stderr.join('\n')).toContain('REDIS_URL: is not a valid Redis URL');
    expect([...io.stderr, ...io.stdout].join('\n')).not.toMatch(/Hunter2|Secret9/);
  });

  it('--dev-vars replaces an existing world-readable file by a new 0600 one, never writing the secrets into the old', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rest-emulator-')), '.dev.vars');
    writeFileSync(file, 'OLD=1\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const before = statSync(file).ino;
    const { stop } = await serving({}, ['--dev-vars', file]);
    // A new inode: whoever had the old (0644) file open never sees the new content.
    expect(statSync(file).ino).not.toBe(before);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('UPSTASH_REDIS_REST_TOKEN=');
    expect(readdirSync(dirname(file))).toEqual(['.dev.vars']);
    expect(await stop()).toBe(0);
  });
});
