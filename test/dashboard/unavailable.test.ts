/**
 * The dashboard with Redis down or frozen (issue 17 §1): a 503 within ~1.5 s — an HTML page
 * for a browser, problem+json otherwise, with Retry-After — and one log line per request;
 * never a hang, a bare 500 or a stack trace. Redis sits behind a proxy the test cuts (refused
 * connections) or freezes (a half-open network: nothing answers, nothing errors).
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { uniquePrefix } from '../support/redis';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { env, publishDeployment } from '../http/fixture';

const ADMIN_TOKEN = 'admin-token-unavailable-42';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
/** The bound, with room for a loaded test machine. */
const ANSWER_WITHIN_MS = 1_500 + 300;

describe.each(['cut', 'freeze'] as const)('dashboard with Redis %s', (fault) => {
  let proxy: TcpProxy;
  let port: RedisPort;
  const lines: string[] = [];
  let app: ReturnType<typeof createPublishApp>;

  beforeEach(async () => {
    const target = new URL(inject('redisUrl'));
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    port = connectIoredis(proxy.url);
    const config = publishDeployment(uniquePrefix(), { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' } });
    const runtime = createRuntime(config, { port, env });
    app = createPublishApp({ runtime, env: { ...env, OPS_ADMIN_TOKEN: ADMIN_TOKEN }, log: (line) => lines.push(line) });
    lines.length = 0;
    expect((await app.request('/ops/overview.json', { headers: bearer })).status).toBe(200);
    proxy[fault]();
  });
  afterEach(async () => {
    // The proxy first: a client closing over a frozen link would wait for its QUIT reply.
    await proxy.close();
    await port.close();
  });

  async function timed(path: string, headers: Record<string, string>) {
    const started = performance.now();
    const response = await app.request(path, { headers });
    return { response, ms: performance.now() - started, body: await response.text() };
  }

  it('answers a browser with a 503 page, quickly, and logs one line', async () => {
    const { response, ms, body } = await timed('/ops', { ...bearer, accept: 'text/html' });
    expect(response.status).toBe(503);
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(body).toContain('Redis unavailable');
    expect(body).not.toMatch(/at .*\.ts:\d+|Error:/);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'dashboard: redis unavailable', error: { code: 'REDIS_UNAVAILABLE' } });
    expect(lines[0]).not.toContain(ADMIN_TOKEN);
  });

  it('answers a JSON client with problem+json, quickly', async () => {
    for (const path of ['/ops/overview.json', '/ops/runs.json']) {
      const { response, ms, body } = await timed(path, bearer);
      expect(response.status).toBe(503);
      expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(JSON.parse(body)).toMatchObject({ code: 'redis_unavailable', status: 503 });
    }
    expect(lines).toHaveLength(2);
  });

  it('still serves the login form, which needs no Redis', async () => {
    const { response } = await timed('/ops/login', { accept: 'text/html' });
    expect(response.status).toBe(200);
  });
});
