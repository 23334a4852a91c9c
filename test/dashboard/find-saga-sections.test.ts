/**
 * The find and saga sections as the shell mounts them (/ops/find, /ops/saga), over a real
 * Redis on every client: what a user typed comes back escaped, states and reasons are shown,
 * links lead to the DLT record and the saga view, and both answer JSON when asked.
 */
import type { Hono } from 'hono';
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { dataSections } from '../../src/dashboard/sections';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { appendOrder, dashboardDeployment, dashboardRuntime, drain, mounted, ordersOf, resultsOf } from './fixture';

const envelope = (fields: Record<string, unknown>) => JSON.stringify({ action: 'execute', issued_at: '2026-11-30T20:00:00Z', ...fields });

describe.each(clientKinds)('find and saga sections over $name', (kind) => {
  let admin: Redis;
  let runtime: DeploymentRuntime;
  let find: Hono;
  let saga: Hono;
  let orders: string;
  let results: string;

  useRedisPerTest(kind, ({ admin: a, port, stream }) => {
    admin = a;
    const config = dashboardDeployment(stream);
    runtime = dashboardRuntime(config, port);
    find = mounted(dataSections.find, 'find', runtime);
    saga = mounted(dataSections.saga, 'saga', runtime);
    orders = ordersOf(config);
    results = resultsOf(config);
  });
  beforeEach(async () => {
    await drain(runtime, 'billing');
    await drain(runtime, 'audit');
  });

  it('shows the search form without an id, and escapes an id it cannot find', async () => {
    const form = await find.request('/ops/find');
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('<form method="get" action="/ops/find">');

    const response = await find.request(`/ops/find?id=${encodeURIComponent('<script>x</script>')}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(html).toContain('Not found within the searched range');
    expect((await find.request('/ops/find?id=x&scan=0')).status).toBe(400);
    expect(await (await find.request('/ops/find?id=1-1')).text()).toContain('No stream or dead-letter stream holds this entry id');
  });

  it('finds an event: its state per group, its DLT record linked, its payload escaped', async () => {
    const id = await appendOrder(admin, orders, 'evt-1', 'reject <b>this</b>');
    await drain(runtime, 'billing');
    const dltId = (await admin.xrange(`${orders}:dlt`, '-', '+'))[0]![0];

    const html = await (await find.request('/ops/find?id=evt-1')).text();
    expect(html).toContain(`<code>${id}</code>`);
    expect(html).toContain('dead-lettered</span> (reason order_unknown)');
    expect(html).toContain('not delivered yet');
    expect(html).toContain(`href="/ops/dlt/record?stream=${encodeURIComponent(orders)}&amp;id=${dltId}"`);
    expect(html).toContain('reject &lt;b&gt;this&lt;/b&gt;');
    expect(html).not.toContain('<b>this</b>');

    const json = (await (await find.request('/ops/find?id=evt-1', { headers: { accept: 'application/json' } })).json()) as any;
    expect(json.entries[0]).toMatchObject({ stream: orders, entry_id: id, found_by: 'scan', in_stream: true });
    expect(json.entries[0].groups).toEqual([
      { group: 'audit', state: 'not_delivered' },
      { group: 'billing', state: 'dead_lettered', reason: 'order_unknown', dlt_id: dltId },
    ]);
    expect(json.dead_letters.map((d: any) => d.id)).toEqual([dltId]);
  });

  it('links a saga instance id to the saga view, which lists its steps in order with their states', async () => {
    const instance = 'order/42';
    const c1 = await appendOrder(admin, orders, 'c1', envelope({ command_id: 'c1', instance_id: instance, step: 'reserve' }));
    const r1 = await appendOrder(admin, results, 'r1', JSON.stringify({ result_id: 'r1', instance_id: instance, step: 'reserve', outcome: 'succeeded', completed_at: '2026-11-30T20:00:01Z' }));
    await drain(runtime, 'audit');

    const found = await (await find.request(`/ops/find?id=${encodeURIComponent(instance)}`)).text();
    expect(found).toContain(`href="/ops/saga/${encodeURIComponent(instance)}"`);

    const page = await saga.request(`/ops/saga/${encodeURIComponent(instance)}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Saga instance <code>order/42</code>');
    // (Two streams may give their entries the same id: the order is checked on what they say.)
    expect(html.indexOf('command · reserve · execute')).toBeGreaterThan(0);
    expect(html.indexOf('result · reserve · succeeded')).toBeGreaterThan(html.indexOf('command · reserve · execute'));
    expect(html).toContain(`<code>${orders}</code>: all 1 entries; all 0 dead letters`);
    // Links to the other sections stay under the mount the page was served from.
    expect(html).toContain(`href="/ops/find?id=${c1}"`);

    const byQuery = (await (await saga.request(`/ops/saga?instance=${encodeURIComponent(instance)}&format=json`)).json()) as any;
    expect(byQuery.steps.map((s: any) => [s.entry_id, s.kind, s.groups.map((g: any) => g.state)])).toEqual([
      [c1, 'command', ['acked', 'not_delivered']],
      [r1, 'result', []],
    ]);
  });

  it('says when no entry of an instance lies within the scan', async () => {
    const html = await (await saga.request('/ops/saga/none-such')).text();
    expect(html).toContain('No entry of this instance within the searched range.');
    expect((await saga.request('/ops/saga/x?scan=abc')).status).toBe(400);
  });
});
