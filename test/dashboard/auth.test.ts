/**
 * The dashboard's gate (issue 17 §1) through the publish API over real Redis: off unless
 * configured; the admin token is its own secret (a producer token does not open it) and is
 * required at start; the login sets an HttpOnly, SameSite=Strict cookie that holds an HMAC,
 * not the token; a forged or expired cookie is refused; state-changing requests that a
 * section serves are refused unless same-origin (CSRF), and bearer clients need no origin.
 */
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardApp } from '../../src/dashboard/app';
import { SESSION_COOKIE, SESSION_MS } from '../../src/dashboard/admin-auth';
import type { DashboardSection } from '../../src/dashboard/contract';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { createLogger } from '../../src/web/log';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { inject } from 'vitest';
import { uniquePrefix } from '../support/redis';
import { env, publishDeployment, SHOP_TOKEN } from '../http/fixture';

const ADMIN_TOKEN = 'admin-token-7c1e90b3d45a';
const ORIGIN = 'http://dash.test';
const html = { accept: 'text/html' };

/** A section that changes state: what the shell must protect. */
const echoSection: DashboardSection = () => new Hono().post('/', (c) => c.text('changed'));
/** A section with a bug: its error must reach the log, not the browser. */
const brokenSection: DashboardSection = () =>
  new Hono().get('/', () => {
    throw new TypeError('internal detail at src/x.ts:12');
  });

describe('dashboard admin auth', () => {
  let port: RedisPort;
  let runtime: DeploymentRuntime;
  const lines: string[] = [];
  let clock = Date.now();
  let app: Hono;

  beforeAll(() => {
    port = connectIoredis(inject('redisUrl'));
    const config = publishDeployment(uniquePrefix(), { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' } });
    runtime = createRuntime(config, { port, env: { ...env, OPS_ADMIN_TOKEN: ADMIN_TOKEN } });
    const log = createLogger((line) => lines.push(line), () => clock, 'auth-test');
    const dashboard = createDashboardApp({
      runtime,
      env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN },
      adminTokenEnv: 'OPS_ADMIN_TOKEN',
      log,
      now: () => clock,
      sections: [
        { name: 'echo', title: 'Echo', section: echoSection },
        { name: 'broken', title: 'Broken', section: brokenSection },
      ],
    });
    app = new Hono().route('/ops', dashboard);
  });
  afterAll(() => port.close());

  const request = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init);
  async function login(token = ADMIN_TOKEN): Promise<Response> {
    return request('/ops/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ token }).toString(),
    });
  }
  async function session(): Promise<string> {
    const cookie = (await login()).headers.get('set-cookie')!;
    return cookie.split(';')[0]!;
  }

  it('is off unless the config enables it: /ops is a plain 404', async () => {
    const config = publishDeployment(uniquePrefix());
    const publishApp = createPublishApp({ runtime: createRuntime(config, { port, env }), env, log: () => {} });
    expect((await publishApp.request('/ops/')).status).toBe(404);
    const response = await publishApp.request('/ops');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'route_not_found' });
  });

  it('enabled, it refuses to start without its admin token variable, or with a short one', () => {
    const config = publishDeployment(uniquePrefix(), { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' } });
    const build = (extra: Record<string, string>) => () => createPublishApp({ runtime: createRuntime(config, { port, env }), env: { ...env, ...extra }, log: () => {} });
    expect(build({})).toThrow(/OPS_ADMIN_TOKEN/);
    expect(build({ OPS_ADMIN_TOKEN: 'short' })).toThrow(/at least 16 characters/);
    expect(build({ OPS_ADMIN_TOKEN: ADMIN_TOKEN })).not.toThrow();
    expect(config.secrets.publishApi).toContain('OPS_ADMIN_TOKEN');
  });

  it('sends a browser without a session to the login form, and answers JSON clients 401', async () => {
    const page = await request('/ops', { headers: html });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/ops/login');
    const json = await request('/ops/overview.json');
    expect(json.status).toBe(401);
    expect(await json.json()).toMatchObject({ code: 'token_missing' });
    expect((await request('/ops/login', { headers: html })).status).toBe(200);
  });

  it('stops reading a login body without a Content-Length once it passes 4 KiB', async () => {
    // A streamed (chunked) body: nothing declares its size, so only counting bounds it.
    let pulled = 0;
    const chunk = new TextEncoder().encode('x'.repeat(1024));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * 1024 * 1024) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await request('/ops/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(401);
    expect(pulled).toBeLessThan(64 * 1024);
  });

  it('logs in with the admin token only: the cookie is HttpOnly, SameSite=Strict and holds no token', async () => {
    const refused = await login(SHOP_TOKEN);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
    expect(lines.at(-1)).toContain('dashboard login refused');
    expect(lines.join('\n')).not.toContain(SHOP_TOKEN);

    const accepted = await login();
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/ops');
    const cookie = accepted.headers.get('set-cookie')!;
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=\\d+\\.[0-9a-f]{64}; `));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/ops/);
    expect(cookie).not.toContain(ADMIN_TOKEN);

    const overview = await request('/ops', { headers: { ...html, cookie: cookie.split(';')[0]! } });
    expect(overview.status).toBe(200);
    expect(overview.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await overview.text()).toContain('Oldest pending age over time');
  });

  it('refuses a forged or expired session cookie', async () => {
    const cookie = await session();
    const [name, value] = cookie.split('=') as [string, string];
    const [expiry, mac] = value.split('.') as [string, string];
    const forged = `${name}=${Number(expiry) + 1000}.${mac}`;
    expect((await request('/ops/overview.json', { headers: { cookie: forged } })).status).toBe(401);
    const flipped = `${name}=${expiry}.${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`;
    expect((await request('/ops/overview.json', { headers: { cookie: flipped } })).status).toBe(401);
    expect((await request('/ops/overview.json', { headers: { cookie } })).status).toBe(200);
    const saved = clock;
    clock += SESSION_MS + 1;
    try {
      expect((await request('/ops/overview.json', { headers: { cookie } })).status).toBe(401);
    } finally {
      clock = saved;
    }
  });

  it('accepts the admin token as a bearer header, and refuses a producer token there', async () => {
    expect((await request('/ops/overview.json', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    const refused = await request('/ops/overview.json', { headers: { authorization: `Bearer ${SHOP_TOKEN}` } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'token_invalid' });
  });

  it("protects sections' state-changing requests: same-origin only with a cookie, any origin with the bearer token", async () => {
    const cookie = await session();
    const post = (headers: Record<string, string>) => request('/ops/echo', { method: 'POST', headers: { cookie, ...headers } });
    expect((await post({})).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'cross-site', origin: ORIGIN })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect((await post({ origin: 'http://evil.test' })).status).toBe(403);
    const refused = await post({ 'sec-fetch-site': 'cross-site' });
    expect(await refused.json()).toMatchObject({ code: 'cross_site_forbidden' });
    expect(await (await post({ 'sec-fetch-site': 'same-origin' })).text()).toBe('changed');
    expect(await (await post({ origin: ORIGIN })).text()).toBe('changed');
    // No cookie and no token: not even the CSRF check is reached.
    expect((await request('/ops/echo', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(401);
    const bearer = await request('/ops/echo', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(await bearer.text()).toBe('changed');
    // A forged login is a cross-site POST too.
    const forgedLogin = await request('/ops/login', { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${ADMIN_TOKEN}` });
    expect(forgedLogin.status).toBe(403);
  });

  it('logs out by clearing the cookie', async () => {
    const response = await request('/ops/logout', { method: 'POST', headers: { cookie: await session(), 'sec-fetch-site': 'same-origin' } });
    expect(response.status).toBe(303);
    expect(response.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=;.*Max-Age=0`));
  });

  it("answers a section's failure with a plain 500 (page or problem), logging it once", async () => {
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const before = lines.length;
    const page = await request('/ops/broken', { headers: { ...headers, accept: 'text/html' } });
    expect(page.status).toBe(500);
    expect(await page.text()).not.toContain('internal detail');
    const json = await request('/ops/broken', { headers });
    expect(await json.json()).toMatchObject({ code: 'internal_error', status: 500 });
    expect(lines.slice(before).map((line) => JSON.parse(line).msg)).toEqual(['dashboard request failed', 'dashboard request failed']);
  });

  it('never logs the admin token', () => {
    expect(lines.join('\n')).not.toContain(ADMIN_TOKEN);
  });
});
