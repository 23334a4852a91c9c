/**
 * The dashboard's admin-token throttle (src/dashboard/login-throttle.ts) through the app:
 * wrong tokens from one client — at the login form or as a bearer header — get 429 with
 * `Retry-After` after 10, without their token being checked; another client (and a session
 * already issued) still gets in; the bucket refills; many clients together meet the global
 * limit; concurrent guesses cannot slip past it. Clients are told apart the way Node's
 * adapter presents them (`env.incoming.socket.remoteAddress`).
 */
import { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createDashboardApp } from '../../src/dashboard/app';
import { LOGIN_LIMITS } from '../../src/dashboard/login-throttle';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createLogger } from '../../src/web/log';
import { uniquePrefix } from '../support/redis';
import { env, publishDeployment } from '../http/fixture';

const ADMIN_TOKEN = 'admin-token-7c1e90b3d45a';
const WRONG = 'wrong-token-0000000000';
const ORIGIN = 'http://dash.test';
const { burst, refillMs } = LOGIN_LIMITS.perClient;

describe('dashboard admin-token throttle', () => {
  let port: RedisPort;
  let runtime: DeploymentRuntime;
  let lines: string[];
  let clock: number;
  let app: Hono;

  beforeAll(() => {
    port = connectIoredis(inject('redisUrl'));
    const config = publishDeployment(uniquePrefix(), { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' } });
    runtime = createRuntime(config, { port, env: { ...env, OPS_ADMIN_TOKEN: ADMIN_TOKEN } });
  });
  afterAll(() => port.close());
  // A fresh app (and so a fresh throttle) per test.
  beforeEach(() => {
    lines = [];
    clock = Date.now();
    const log = createLogger((line) => lines.push(line), () => clock, 'throttle-test');
    const dashboard = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log, now: () => clock });
    app = new Hono().route('/ops', dashboard);
  });

  const from = (address: string) => ({ incoming: { socket: { remoteAddress: address } } });
  const login = (address: string, token: string, accept = 'text/html') =>
    app.request(
      `${ORIGIN}/ops/login`,
      { method: 'POST', headers: { accept, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, body: new URLSearchParams({ token }).toString() },
      from(address),
    );
  const bearer = (address: string, token: string) => app.request(`${ORIGIN}/ops/overview.json`, { headers: { authorization: `Bearer ${token}` } }, from(address));
  const statuses = async (responses: ReadonlyArray<Response | Promise<Response>>) => (await Promise.all(responses)).map((response) => response.status);
  const wrongLogins = (address: string, count: number) => Array.from({ length: count }, () => login(address, WRONG));

  it(`a burst of wrong tokens from one client gets 429 with Retry-After after ${burst}, and its token is no longer checked`, async () => {
    const seen: number[] = [];
    for (let i = 0; i < burst + 5; i += 1) seen.push((await login('203.0.113.7', WRONG)).status);
    expect(seen).toEqual([...Array(burst).fill(401), ...Array(5).fill(429)]);

    const page = await login('203.0.113.7', ADMIN_TOKEN);
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBe(Math.ceil(refillMs / 1000));
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(await page.text()).toContain('Too many admin token attempts from here: try again in 6 s.');

    const problem = await login('203.0.113.7', WRONG, 'application/json');
    expect(problem.status).toBe(429);
    expect(problem.headers.get('content-type')).toContain('application/problem+json');
    expect(problem.headers.get('retry-after')).toBe('6');
    expect(await problem.json()).toMatchObject({ code: 'too_many_attempts', status: 429 });

    const throttled = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'dashboard token attempts throttled');
    expect(throttled).toHaveLength(1);
    expect(throttled[0].detail).toEqual({ via: 'login', scope: 'client', retryAfterSeconds: 6 });
    expect(lines.join('\n')).not.toMatch(new RegExp(`${WRONG}|${ADMIN_TOKEN}`));
  });

  it('while one client is throttled, the right token works from another, and a session already issued keeps working', async () => {
    const cookie = (await login('203.0.113.7', ADMIN_TOKEN)).headers.get('set-cookie')!.split(';')[0]!;
    expect(await statuses(wrongLogins('203.0.113.7', burst + 1))).toContain(429);
    expect((await login('198.51.100.20', ADMIN_TOKEN)).status).toBe(303);
    expect((await bearer('198.51.100.21', ADMIN_TOKEN)).status).toBe(200);
    const withSession = await app.request(`${ORIGIN}/ops/overview.json`, { headers: { cookie } }, from('203.0.113.7'));
    expect(withSession.status).toBe(200);
  });

  it('the bucket refills: one attempt per Retry-After, all of them again after a quiet minute', async () => {
    await statuses(wrongLogins('203.0.113.7', burst));
    expect((await login('203.0.113.7', WRONG)).status).toBe(429);
    clock += refillMs;
    expect(await statuses(wrongLogins('203.0.113.7', 2))).toEqual([401, 429]);
    clock += burst * refillMs;
    expect(await statuses(wrongLogins('203.0.113.7', burst + 1))).toEqual([...Array(burst).fill(401), 429]);
    expect((await login('203.0.113.7', ADMIN_TOKEN)).status).toBe(429);
    clock += refillMs;
    expect((await login('203.0.113.7', ADMIN_TOKEN)).status).toBe(303);
  });

  it('concurrent guesses cannot slip past the limit, and right tokens never use it up', async () => {
    const all = await statuses(wrongLogins('203.0.113.7', 50));
    expect(all.filter((status) => status === 401)).toHaveLength(burst);
    expect(all.filter((status) => status === 429)).toHaveLength(50 - burst);
    // A right token gives its attempt back once checked (at most `burst` checks are in flight per client).
    for (let i = 0; i < 5 * burst; i += 1) expect((await login('198.51.100.20', ADMIN_TOKEN)).status).toBe(303);
    expect(await statuses(Array.from({ length: burst }, () => bearer('198.51.100.20', ADMIN_TOKEN)))).toEqual(Array(burst).fill(200));
  });

  it('wrong bearer tokens are throttled like the login form', async () => {
    const seen = await statuses(Array.from({ length: burst + 2 }, () => bearer('203.0.113.7', WRONG)));
    expect(seen.filter((status) => status === 401)).toHaveLength(burst);
    const refused = await bearer('203.0.113.7', ADMIN_TOKEN);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('6');
    expect(await refused.json()).toMatchObject({ code: 'too_many_attempts' });
    // The login form shares the client's bucket.
    expect((await login('203.0.113.7', WRONG)).status).toBe(429);
  });

  it('many clients together meet the global limit: a fresh client waits too, one second', async () => {
    const { burst: globalBurst, refillMs: globalRefillMs } = LOGIN_LIMITS.global;
    const crowd = Array.from({ length: globalBurst / burst }, (_, i) => `192.0.2.${i + 1}`);
    for (const address of crowd) expect(await statuses(wrongLogins(address, burst))).toEqual(Array(burst).fill(401));
    const fresh = await login('198.51.100.20', ADMIN_TOKEN, 'application/json');
    expect(fresh.status).toBe(429);
    expect(fresh.headers.get('retry-after')).toBe(String(Math.ceil(globalRefillMs / 1000)));
    const throttled = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'dashboard token attempts throttled');
    expect(throttled.map((line) => line.detail.scope)).toEqual(['all clients']);
    clock += globalRefillMs;
    expect((await login('198.51.100.20', ADMIN_TOKEN)).status).toBe(303);
  });

  it('addresses of one IPv6 /64 are one client', async () => {
    for (let i = 0; i < burst; i += 1) expect((await login(`2001:db8:1:2::${(i + 1).toString(16)}`, WRONG)).status).toBe(401);
    expect((await login('2001:db8:1:2:ffff::1', WRONG)).status).toBe(429);
    expect((await login('2001:db8:1:3::1', ADMIN_TOKEN)).status).toBe(303);
  });
});
