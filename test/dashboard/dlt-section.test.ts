/**
 * The DLT browser section as the shell mounts it (/ops/dlt), over a real Redis on every
 * client: payloads are shown escaped, size-capped and binary as hex, in HTML and JSON alike;
 * redrive asks first (GET changes nothing) and the POST moves the record back to its stream.
 */
import type { Hono } from 'hono';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { deadLetterSection } from '../../src/dashboard/sections/dlt';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { appendOrder, dashboardDeployment, dashboardRuntime, drain, mounted, ordersOf } from './fixture';

const SCRIPT = '<script>alert("x")</script>';

describe.each(clientKinds)('dashboard DLT section over $name', (kind) => {
  let admin: Redis;
  let runtime: DeploymentRuntime;
  let app: Hono;
  let orders: string;
  let dlt: string;

  useRedisPerTest(kind, ({ admin: a, port, stream }) => {
    admin = a;
    const config = dashboardDeployment(stream);
    runtime = dashboardRuntime(config, port);
    app = mounted(deadLetterSection, 'dlt', runtime);
    orders = ordersOf(config);
    dlt = config.consumers.get('billing')!.config.keys.dlt;
  });

  async function deadLetter(payload: string | Buffer, eventId = 'e1'): Promise<string> {
    const source = await appendOrder(admin, orders, eventId, payload);
    expect((await drain(runtime, 'billing')).deadLettered).toBe(1);
    return source;
  }
  const dltIds = async () => (await admin.xrange(dlt, '-', '+')).map(([id]) => id);
  const get = (path: string, json = false) => app.request(path, json ? { headers: { accept: 'application/json' } } : {});

  it('lists reasons with counts and records with their ids, the payload HTML-escaped', async () => {
    const source = await deadLetter(`reject ${SCRIPT}`);
    const [id] = await dltIds();

    const response = await get('/ops/dlt');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('reject &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('order_unknown');
    for (const shown of [id!, source, 'e1', 'billing']) expect(html).toContain(shown);
    expect(html).toContain(`href="/ops/dlt/record?stream=${encodeURIComponent(orders)}&amp;id=${id}"`);
    expect(html).toContain(`/ops/dlt/redrive?stream=${encodeURIComponent(orders)}&amp;reason=order_unknown`);

    const json = (await (await get('/ops/dlt', true)).json()) as any;
    expect(json.streams).toEqual([{ stream: orders, dlt, length: 1, counted: 1, reasons: [{ reason: 'order_unknown', count: 1 }] }]);
    expect(json.records[0]).toMatchObject({ id, source_entry_id: source, event_id: 'e1', group: 'billing', deliveries: 1, reason: 'order_unknown' });
    expect(json.records[0].original[2]).toEqual({ name: 'payload', encoding: 'utf8', value: `reject ${SCRIPT}`, total_bytes: 7 + SCRIPT.length, omitted_bytes: 0 });
  });

  it('shows a binary payload as hex and caps a large one at 4 KiB with the bytes left out', async () => {
    await deadLetter(Buffer.from([0x72, 0x65, 0x6a, 0x65, 0x63, 0x74, 0xff, 0xfe, 0x3c]), 'bin');
    await deadLetter(`reject ${'a'.repeat(10_000)}`, 'big');
    const [binId, bigId] = await dltIds();

    const binary = await (await get(`/ops/dlt/record?stream=${encodeURIComponent(orders)}&id=${binId}`)).text();
    expect(binary).toContain('hex 72656a656374fffe3c');
    const big = await (await get(`/ops/dlt/record?stream=${encodeURIComponent(orders)}&id=${bigId}`)).text();
    expect(big).toContain(`… ${10_007 - 4096} more bytes`);
    expect(big).not.toContain('a'.repeat(4096));

    const json = (await (await get(`/ops/dlt/record?stream=${encodeURIComponent(orders)}&id=${binId}&format=json`)).json()) as any;
    expect(json.original[2]).toEqual({ name: 'payload', encoding: 'hex', value: '72656a656374fffe3c', total_bytes: 9, omitted_bytes: 0 });
  });

  it('redrives one record: the GET asks and changes nothing, the POST moves it back to the stream', async () => {
    const source = await deadLetter('reject once');
    const [id] = await dltIds();

    const confirm = await get(`/ops/dlt/redrive?stream=${encodeURIComponent(orders)}&id=${id}`);
    expect(confirm.status).toBe(200);
    const form = await confirm.text();
    expect(form).toContain('<form method="post" action="/ops/dlt/redrive">');
    expect(form).toContain(`<input type="hidden" name="id" value="${id}">`);
    expect(await dltIds()).toEqual([id]);

    const response = await app.request('/ops/dlt/redrive', {
      method: 'POST',
      body: new URLSearchParams({ stream: orders, id: id! }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(200);
    const [newId, fields] = (await admin.xrevrange(orders, '+', '-', 'COUNT', 1))[0]!;
    expect(newId).not.toBe(source);
    expect(fields).toEqual(['event', 'order.placed', 'event_id', 'e1', 'payload', 'reject once']);
    expect(await dltIds()).toEqual([]);
    expect(await response.text()).toContain(`<code>${newId}</code>`);

    const again = await app.request('/ops/dlt/redrive?format=json', {
      method: 'POST',
      body: JSON.stringify({ stream: orders, id }),
      headers: { 'content-type': 'application/json' },
    });
    expect(((await again.json()) as any).outcomes).toEqual([{ id, status: 'missing', entry_id: null, reason: null }]);
  });

  it('redrives every record of a reason, leaving the other reasons', async () => {
    await deadLetter('reject 1', 'a');
    await deadLetter('bad 1', 'b');
    await deadLetter('reject 2', 'c');

    const plan = (await (await get(`/ops/dlt/redrive?stream=${encodeURIComponent(orders)}&reason=order_unknown`, true)).json()) as any;
    expect(plan.records.map((r: any) => [r.event_id, r.planned])).toEqual([
      ['a', 'redrive'],
      ['c', 'redrive'],
    ]);
    const response = await app.request('/ops/dlt/redrive', {
      method: 'POST',
      body: new URLSearchParams({ stream: orders, reason: 'order_unknown' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    const result = (await response.json()) as any;
    expect(result.outcomes.map((o: any) => o.status)).toEqual(['redriven', 'redriven']);
    const left = await admin.xrange(dlt, '-', '+');
    expect(left).toHaveLength(1);
    expect(left[0]![1]).toContain('total_invalid');
  });

  it('refuses malformed input with a 400 and unknown streams with a 404, never a 500', async () => {
    expect((await get('/ops/dlt?before=nope')).status).toBe(400);
    expect((await get('/ops/dlt?stream=nope')).status).toBe(404);
    expect((await get(`/ops/dlt/record?stream=${encodeURIComponent(orders)}&id=1-1`)).status).toBe(404);
    const both = await app.request('/ops/dlt/redrive', {
      method: 'POST',
      body: new URLSearchParams({ stream: orders, id: '1-1', reason: 'x' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(both.status).toBe(400);
    expect(await both.text()).toContain('either id');
  });
});
