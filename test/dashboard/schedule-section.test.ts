/**
 * The Scheduled section (/ops/schedule) over a real Redis on every client: events published
 * with a due time are listed per declared stream (a stream nobody consumes included), earliest
 * due first and paged; cancel asks first (GET changes nothing) and the POST removes the event
 * and turns its dedupe record — under the stream's own configured prefix — into `cancelled`,
 * so a retried publish stays a duplicate. Through the whole shell, a cookie POST without the
 * same-origin signal is refused. On Cluster, a stream without a hash tag is answered with the
 * reason, never a 500.
 */
import { Hono } from 'hono';
import type { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { createDashboardApp } from '../../src/dashboard/app';
import { scheduleSection } from '../../src/dashboard/sections/schedule';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { listScheduled } from '../../src/schedule/list';
import { createLogger } from '../../src/web/log';
import { clientKinds } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';
import { useClusterPerSuite, useRedisPerTest } from '../support/redis-suite';
import { dashboardRuntime, mounted } from './fixture';

const HOUR = 3_600_000;

/** Orders (consumed, with its own dedupe prefix) and reminders (declared, consumed by nobody). */
function scheduleDeployment(prefix: string, reminders = `${prefix}:{m}:reminders`): DeploymentConfig {
  const orders = `${prefix}:{o}:orders`;
  return defineConfig({
    name: 'shop',
    redis: { tcp: {} },
    streams: {
      [orders]: { auth: { mode: 'exclusive-stream', producer: 'shop' }, keys: { publishDedupePrefix: `${prefix}:{o}:seen:` } },
      [reminders]: { auth: { mode: 'exclusive-stream', producer: 'mailer' } },
    },
    routes: { 'order.placed': orders, 'reminder.due': reminders },
    consumers: {
      billing: { stream: orders, group: 'billing', schedule: '* * * * *', settings: { runBudgetMs: 5_000, minIdleMs: 10_000 }, handler: entryConsumer(() => undefined) },
    },
  });
}

const streamsOf = (config: DeploymentConfig) => Object.keys(config.data.streams) as [string, string];
const form = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
});
const jsonPost = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', accept: 'application/json' } });

describe.each(clientKinds)('dashboard Scheduled section over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let runtime: DeploymentRuntime;
  let app: Hono;
  let orders: string;
  let reminders: string;
  let prefix: string;
  /** The dashboard's clock: the events below are due from `base` on. */
  const base = Date.now() + 24 * HOUR;
  let clock = base - 3 * 60_000;

  useRedisPerTest(kind, (h) => {
    ({ admin, port } = h);
    prefix = h.stream;
    const config = scheduleDeployment(prefix);
    [orders, reminders] = streamsOf(config);
    runtime = dashboardRuntime(config, port);
    clock = base - 3 * 60_000;
    app = mounted(scheduleSection, 'schedule', runtime, () => clock);
  });

  const order = (eventId: string, deliverAt: number) =>
    runtime.publisherFor('shop').publish({ eventType: 'order.placed', eventId, payload: `{"id":"${eventId}"}` }, { deliverAt });
  const get = (path: string, json = false) => app.request(path, json ? { headers: { accept: 'application/json' } } : {});
  const scheduledIds = async (stream = orders) => (await listScheduled(port, stream)).events.map((e) => e.eventId);
  const q = encodeURIComponent;

  it('lists each declared stream with its count and next due time, and the events of one, escaped', async () => {
    await order('o-1', base);
    const reminder = await runtime.publisherFor('mailer').publish({ eventType: 'reminder.due', eventId: '<i>r-1</i>', payload: 'x'.repeat(10) }, { deliverAt: base + HOUR });
    expect(reminder).toMatchObject({ entryId: '', scheduled: { deliverAtMs: base + HOUR } });

    const html = await (await get('/ops/schedule')).text();
    // Both streams, the one nobody consumes too; the first with events is chosen.
    expect(html).toContain(`href="/ops/schedule?stream=${q(orders)}"`);
    expect(html).toContain(`href="/ops/schedule?stream=${q(reminders)}"`);
    expect(html).toContain(`Scheduled on <code>${orders}</code>`);
    expect(html).toContain('<code>o-1</code>');
    expect(html).toContain('order.placed');
    expect(html).toContain(`<time datetime="${new Date(base).toISOString()}">`);
    expect(html).toContain('(in 3m)');
    expect(html).toContain(`href="/ops/schedule/cancel?stream=${q(orders)}&amp;event_id=o-1"`);

    const other = await (await get(`/ops/schedule?stream=${q(reminders)}`)).text();
    expect(other).not.toContain('<i>');
    expect(other).toContain('<code>&lt;i&gt;r-1&lt;/i&gt;</code>');
    expect(other).toContain('reminder.due');
    expect(other).toContain('(in 63m)');

    clock = base + 2_000;
    const json = (await (await get('/ops/schedule', true)).json()) as any;
    expect(json.streams).toEqual([
      { stream: orders, schedulable: true, scheduled: 1, next_deliver_at: new Date(base).toISOString(), problem: null },
      { stream: reminders, schedulable: true, scheduled: 1, next_deliver_at: new Date(base + HOUR).toISOString(), problem: null },
    ]);
    expect(json).toMatchObject({ stream: orders, offset: 0, total: 1, next_offset: null });
    const bytes = 'event'.length + 'order.placed'.length + 'event_id'.length + 'o-1'.length + 'payload'.length + '{"id":"o-1"}'.length;
    // An exclusive-stream entry is these three fields, unsigned.
    expect(json.events).toEqual([{ event_id: 'o-1', event_type: 'order.placed', deliver_at: new Date(base).toISOString(), due_in_ms: -2_000, bytes }]);
    expect(await (await get('/ops/schedule')).text()).toContain('(overdue by 2s)');
  });

  it('pages earliest due first: a size, an offset, and a "later" link from the next offset', async () => {
    await order('third', base + 3 * HOUR);
    await order('first', base + HOUR);
    await order('second', base + 2 * HOUR);

    const page = await (await get(`/ops/schedule?stream=${q(orders)}&size=2`)).text();
    expect(page.indexOf('<code>first</code>')).toBeGreaterThan(-1);
    expect(page.indexOf('<code>second</code>')).toBeGreaterThan(page.indexOf('<code>first</code>'));
    expect(page).not.toContain('<code>third</code>');
    expect(page).toContain('Showing 1–2 of 3.');
    expect(page).toContain(`<a href="/ops/schedule?stream=${q(orders)}&amp;offset=2&amp;size=2">later →</a>`);

    const later = (await (await get(`/ops/schedule?stream=${q(orders)}&offset=2&size=2`, true)).json()) as any;
    expect(later).toMatchObject({ offset: 2, total: 3, next_offset: null });
    expect(later.events.map((e: any) => e.event_id)).toEqual(['third']);

    const second = (await (await get(`/ops/schedule?stream=${q(orders)}&offset=1&format=json`)).json()) as any;
    expect(second.events.map((e: any) => e.event_id)).toEqual(['second', 'third']);
    expect(await (await get(`/ops/schedule?stream=${q(orders)}&offset=1`)).text()).toContain('← earliest');
  });

  it('cancels after confirming: gone from the schedule, and a retried publish stays a duplicate', async () => {
    await order('keep', base + HOUR);
    await order('gone', base);
    const record = `${prefix}:{o}:seen:gone`;
    expect(await admin.get(record)).toMatch(/^scheduled@/);

    const confirm = await get(`/ops/schedule/cancel?stream=${q(orders)}&event_id=gone`);
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain('<form method="post" action="/ops/schedule/cancel">');
    expect(page).toContain(`<input type="hidden" name="stream" value="${orders}">`);
    expect(page).toContain('<input type="hidden" name="event_id" value="gone">');
    expect(page).toContain('removed from the schedule before it is appended');
    expect(page).toContain('stays a duplicate');
    expect(page).toContain('(in 3m)');
    const planned = (await (await get(`/ops/schedule/cancel?stream=${q(orders)}&event_id=gone`, true)).json()) as any;
    expect(planned).toEqual({ stream: orders, event_id: 'gone', scheduled: true, deliver_at: new Date(base).toISOString(), due_in_ms: 180_000 });
    expect(await scheduledIds()).toEqual(['gone', 'keep']);

    const response = await app.request('/ops/schedule/cancel', form({ stream: orders, event_id: 'gone' }));
    expect(response.status).toBe(200);
    const result = await response.text();
    expect(result).toContain('<strong>cancelled</strong>');
    expect(result).toContain(new Date(base).toISOString());
    expect(await scheduledIds()).toEqual(['keep']);
    // Cancelled under the stream's configured dedupe prefix, as the CLI does: a retry is a duplicate.
    expect(await admin.get(record)).toMatch(/^cancelled@/);
    const retried = await order('gone', base);
    expect(retried).toMatchObject({ duplicate: true, entryId: '', scheduled: { cancelled: true } });
    expect(await scheduledIds()).toEqual(['keep']);
    expect(await admin.xlen(orders)).toBe(0);

    const again = await app.request('/ops/schedule/cancel', jsonPost({ stream: orders, event_id: 'gone' }));
    expect(await again.json()).toEqual({ stream: orders, event_id: 'gone', status: 'not_scheduled', deliver_at: null });
    const nothing = await (await get(`/ops/schedule/cancel?stream=${q(orders)}&event_id=gone`)).text();
    expect(nothing).toContain('It is not scheduled');
    expect(nothing).not.toContain('<form');
    const notHtml = await (await app.request('/ops/schedule/cancel', form({ stream: orders, event_id: 'gone' }))).text();
    expect(notHtml).toContain('<strong>not scheduled</strong>');

    const keep = await app.request('/ops/schedule/cancel', jsonPost({ stream: orders, event_id: 'keep' }));
    expect(await keep.json()).toEqual({ stream: orders, event_id: 'keep', status: 'cancelled', deliver_at: new Date(base + HOUR).toISOString() });
    expect(await scheduledIds()).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field, an unknown stream with a 404 on the list, never a 500', async () => {
    await order('o-1', base);
    for (const offset of ['-1', '1.5', 'abc', '1e3', '']) {
      const response = await get(`/ops/schedule?offset=${q(offset)}`, true);
      expect(response.status, offset).toBe(400);
      expect(((await response.json()) as any).error).toContain('offset');
    }
    for (const size of ['0', '1001', 'x']) expect(((await (await get(`/ops/schedule?size=${size}`, true)).json()) as any).error).toContain('size');
    expect((await get('/ops/schedule?stream=nope')).status).toBe(404);

    for (const eventId of ['has space', 'x'.repeat(257), 'é']) {
      const confirm = await get(`/ops/schedule/cancel?stream=${q(orders)}&event_id=${q(eventId)}`);
      expect(confirm.status).toBe(400);
      expect(await confirm.text()).toContain('event_id must be');
      const post = await app.request('/ops/schedule/cancel', jsonPost({ stream: orders, event_id: eventId }));
      expect(post.status).toBe(400);
      expect(((await post.json()) as any).error).toContain('event_id');
    }
    const missing = await app.request('/ops/schedule/cancel', form({ stream: orders }));
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('event_id');
    const unknown = await app.request('/ops/schedule/cancel', jsonPost({ stream: 'nope', event_id: 'o-1' }));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error).toContain('stream');
    const notJson = await app.request('/ops/schedule/cancel', { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(await scheduledIds()).toEqual(['o-1']);
  });
});

describe('the Scheduled section behind the shell', () => {
  const ADMIN_TOKEN = 'admin-token-schedule-5b21e0c9';
  const ORIGIN = 'http://dash.test';

  it('is in the nav, and a cookie POST must be same-origin (CSRF) before anything is cancelled', async () => {
    const port = connectIoredis(inject('redisUrl'));
    const admin = adminClient();
    try {
      const config = scheduleDeployment(uniquePrefix());
      const [orders] = streamsOf(config);
      const runtime = dashboardRuntime(config, port);
      const dashboard = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log: createLogger(() => {}, Date.now, 'schedule-test') });
      const app = new Hono().route('/ops', dashboard);
      const request = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init);
      await runtime.publisherFor('shop').publish({ eventType: 'order.placed', eventId: 'csrf-1', payload: '{}' }, { delayMs: 24 * HOUR });

      const login = await request('/ops/login', form({ token: ADMIN_TOKEN }, { 'sec-fetch-site': 'same-origin' }));
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const page = await (await request('/ops/schedule', { headers: { cookie, accept: 'text/html' } })).text();
      expect(page).toContain('<a href="/ops/schedule">Scheduled</a>');
      expect(page).toContain('<code>csrf-1</code>');

      for (const headers of [{}, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://evil.test' }] as Array<Record<string, string>>) {
        const refused = await request('/ops/schedule/cancel', form({ stream: orders, event_id: 'csrf-1' }, { cookie, ...headers }));
        expect(refused.status).toBe(403);
        expect(await refused.json()).toMatchObject({ code: 'cross_site_forbidden' });
      }
      expect((await listScheduled(port, orders)).events.map((e) => e.eventId)).toEqual(['csrf-1']);

      const accepted = await request('/ops/schedule/cancel', form({ stream: orders, event_id: 'csrf-1' }, { cookie, 'sec-fetch-site': 'same-origin', accept: 'text/html' }));
      expect(accepted.status).toBe(200);
      expect(await accepted.text()).toContain('<strong>cancelled</strong>');
      expect((await listScheduled(port, orders)).total).toBe(0);
    } finally {
      await port.close();
      admin.disconnect();
    }
  });
});

describe('the Scheduled section on Redis Cluster', () => {
  let port: RedisPort;
  useClusterPerSuite((h) => ({ port } = h));

  it('lists and cancels on a hash-tagged stream, and says why a stream without a tag holds none', async () => {
    const prefix = uniquePrefix();
    const untagged = `${prefix}-reminders`;
    const config = scheduleDeployment(prefix, untagged);
    const [orders] = streamsOf(config);
    const runtime = dashboardRuntime(config, port);
    const app = mounted(scheduleSection, 'schedule', runtime);
    await runtime.publisherFor('shop').publish({ eventType: 'order.placed', eventId: 'c-1', payload: '{}' }, { delayMs: 24 * HOUR });
    const json = { headers: { accept: 'application/json' } };

    const listed = (await (await app.request('/ops/schedule', json)).json()) as any;
    expect(listed.streams[0]).toMatchObject({ stream: orders, schedulable: true, scheduled: 1 });
    expect(listed.streams[1]).toMatchObject({ stream: untagged, schedulable: false, scheduled: 0 });
    expect(listed.streams[1].problem).toContain('hash tag');
    expect(listed.events.map((e: any) => e.event_id)).toEqual(['c-1']);

    const page = await app.request(`/ops/schedule?stream=${encodeURIComponent(untagged)}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('cannot hold scheduled events');
    for (const init of [{}, json]) expect((await app.request(`/ops/schedule?stream=${encodeURIComponent(untagged)}`, init)).status).toBe(200);
    const refused = await app.request('/ops/schedule/cancel', jsonPost({ stream: untagged, event_id: 'c-1' }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error).toMatch(/^stream cannot hold scheduled events: on Redis Cluster/);
    expect((await app.request(`/ops/schedule/cancel?stream=${encodeURIComponent(untagged)}&event_id=c-1`)).status).toBe(400);

    const cancelled = await app.request('/ops/schedule/cancel', jsonPost({ stream: orders, event_id: 'c-1' }));
    expect(await cancelled.json()).toMatchObject({ stream: orders, event_id: 'c-1', status: 'cancelled' });
    expect((await listScheduled(port, orders)).total).toBe(0);
  });
});
