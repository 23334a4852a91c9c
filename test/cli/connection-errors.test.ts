/**
 * Redis connection failures as the CLI reports them: the server (host:port, never the
 * URL's password) and what happened — refused, timed out, closed — instead of ioredis'
 * "Reached the max retries per request limit (which is 0)". A REDIS_URL that is not a URL
 * is said to be one, by the commands and the local stack, before anything connects.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../local/redis-server';
import { runCli } from '../../cli/run';
import { recordingIo, TEST_KEY, writeFixtureConfig } from './fixture';

const PASSWORD = 'hunter2-in-the-url';

/** A listener that does `onConnection` to every connection (closes it, or never answers). */
async function listener(onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

async function backlogAgainst(port: number): Promise<{ code: number; stderr: string }> {
  const fixture = writeFixtureConfig();
  const io = recordingIo({ REDIS_URL: `redis://default:${PASSWORD}@127.0.0.1:${port}`, CLI_TEST_KEY: TEST_KEY });
  const code = await runCli(['--config', fixture.path, 'backlog'], io);
  return { code, stderr: io.stderr.join('\n') };
}

describe('CLI connection errors', () => {
  const servers: Server[] = [];
  const held: Socket[] = [];
  afterEach(async () => {
    for (const socket of held.splice(0)) socket.destroy();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('a port nobody listens on: "refused the connection", with host:port and no password', async () => {
    const port = await freePort();
    const { code, stderr } = await backlogAgainst(port);
    expect(code).toBe(1);
    expect(stderr).toContain(`redis unreachable: 127.0.0.1:${port} refused the connection`);
    expect(stderr).not.toMatch(/max retries|hunter2/);
  });

  it('a listener that accepts and never answers: "timed out"', async () => {
    const { server, port } = await listener((socket) => void held.push(socket));
    servers.push(server);
    const { code, stderr } = await backlogAgainst(port);
    expect(code).toBe(1);
    expect(stderr).toContain(`redis unreachable: 127.0.0.1:${port} timed out (no reply within`);
    expect(stderr).not.toContain(PASSWORD);
  }, 30_000);

  it('a listener that closes every connection: "closed the connection"', async () => {
    const { server, port } = await listener((socket) => socket.destroy());
    servers.push(server);
    const { code, stderr } = await backlogAgainst(port);
    expect(code).toBe(1);
    expect(stderr).toContain(`redis unreachable: 127.0.0.1:${port} closed the connection`);
    expect(stderr).not.toMatch(/max retries|hunter2/);
  });

  it.each([
    ['not-a-url', 'is not a URL: expected redis://'],
    [`default:${PASSWORD}@not-a-url:6379`, 'is not a URL: expected redis://'],
    [`http://default:${PASSWORD}@127.0.0.1:6379`, 'is not a Redis URL: expected redis://'],
  ])('REDIS_URL=%s: a config error naming REDIS_URL, from a command and from the local stack, with no password', async (url, message) => {
    const fixture = writeFixtureConfig();
    const env = { REDIS_URL: url, CLI_TEST_KEY: TEST_KEY };
    const backlog = recordingIo(env);
    expect(await runCli(['--config', fixture.path, 'backlog'], backlog)).toBe(1);
    // The local stack, in a folder of its own (it writes its dev file there).
    const folder = mkdtempSync(join(tmpdir(), 'saga-streams-dev-url-'));
    const dev = recordingIo(env, folder);
    const code = await runCli(['--config', fixture.path, 'dev', '--port', '0'], dev).finally(() => rmSync(folder, { recursive: true, force: true }));
    expect(code).toBe(1);
    for (const stderr of [backlog.stderr.join('\n'), dev.stderr.join('\n')]) {
      expect(stderr).toContain(`REDIS_URL: ${message}`);
      expect(stderr).not.toMatch(/not a known host|hunter2|not-a-url/);
    }
  });
});
