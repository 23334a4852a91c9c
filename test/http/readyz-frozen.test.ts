/**
 * `/readyz` of the publish API with Redis frozen (a real redis-server stopped with SIGSTOP:
 * its connections stay open and nothing answers). It answers 503 problem+json within
 * READINESS_TIMEOUT_MS plus a margin — not after the client's 10 s exchange timeout twice
 * (PING, then the groups) — and logs one line without a stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisProcess } from '../../local/redis-server';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { READINESS_TIMEOUT_MS } from '../../src/http/readiness';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { uniquePrefix } from '../support/redis';
import { env, publishDeployment } from './fixture';

describe('/readyz with Redis frozen (SIGSTOP)', () => {
  let server: RedisProcess;
  let port: RedisPort;
  beforeAll(async () => {
    server = await startRedisServer();
    port = connectIoredis(server.url);
  });
  afterAll(async () => {
    process.kill(server.pid, 'SIGCONT');
    await port.close();
    await server.stop();
  });

  it('503 problem+json within ~1.5 s, one log line, no stack trace; ready again once Redis resumes', { timeout: 30_000 }, async () => {
    const logs: string[] = [];
    const app = createPublishApp({ runtime: createRuntime(publishDeployment(uniquePrefix()), { port, env }), env, log: (line) => logs.push(line) });
    expect((await app.request('/readyz')).status).toBe(200);

    process.kill(server.pid, 'SIGSTOP');
    const started = Date.now();
    const response = await app.request('/readyz');
    const elapsed = Date.now() - started;
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.json()).toMatchObject({ code: 'not_ready', status: 503 });
    expect(elapsed).toBeGreaterThanOrEqual(READINESS_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(1_500);
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'warn', msg: 'not ready' });
    expect(logs[0]).toContain('no reply before the readiness deadline');
    expect(logs[0]).not.toMatch(/\bat .+:\d+:\d+/);

    process.kill(server.pid, 'SIGCONT');
    let ready = await app.request('/readyz');
    // The exchanges abandoned while frozen are answered first; then PING is quick again.
    for (let tries = 0; tries < 20 && ready.status !== 200; tries += 1) ready = await app.request('/readyz');
    expect(ready.status).toBe(200);
  });
});
