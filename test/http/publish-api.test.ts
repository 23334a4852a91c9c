/**
 * SPEC §6.2 through `app.request`, on every Redis client: each status code of the publish
 * API, what Redis holds afterwards, the batch in one round trip, wake-ups, and that no
 * token or key reaches a response or a log line.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { PROBLEM_CONTENT_TYPE } from '../../src/web/problems';
import { meterPort, type MeteredPort } from '../../src/redis/metered';
import { clientKinds } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';
import { BILLING_TOKEN, bearer, env, publishDeployment, secretsIn, SHOP_TOKEN, streamsOf, TRACEPARENT, type Streams } from './fixture';

type Fields = Record<string, string>;

async function entries(admin: Redis, stream: string): Promise<Array<{ id: string; fields: Fields }>> {
  const rows = await admin.xrange(stream, '-', '+');
  return rows.map(([id, flat]) => {
    const fields: Fields = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
    return { id, fields };
  });
}

describe.each(clientKinds)('publish API over $name', (kind) => {
  let port: MeteredPort;
  let admin: Redis;
  let streams: Streams;
  let runtime: DeploymentRuntime;
  let logs: string[];
  let wakeUps: string[][];
  let responses: string[];

  function app(options: { bodyLimitBytes?: number; maxBatch?: number; wakeUp?: (streams: readonly string[]) => Promise<void> } = {}) {
    const prefix = uniquePrefix();
    streams = streamsOf(prefix);
    runtime = createRuntime(publishDeployment(prefix, { bodyLimitBytes: options.bodyLimitBytes, maxBatch: options.maxBatch }), { port, env });
    const built = createPublishApp({
      runtime,
      env,
      log: (line) => logs.push(line),
      wakeUp: options.wakeUp ?? (async (s) => void wakeUps.push([...s])),
    });
    // Every response body is kept, so the last test of each group can scan them for secrets.
    return {
      async request(path: string, init: RequestInit): Promise<Response> {
        const res = await built.request(path, init);
        responses.push(`${[...res.headers].join('\n')}\n${await res.clone().text()}`);
        return res;
      },
    };
  }

  async function problem(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status, code, type: `urn:saga-streams:problem:${code}` });
    expect(JSON.stringify(body)).not.toMatch(/\bat .+:\d+:\d+/); // no stack frames
    return body;
  }

  beforeEach(() => {
    port = meterPort(kind.connect());
    admin = adminClient();
    logs = [];
    wakeUps = [];
    responses = [];
  });
  afterEach(async () => {
    expect(secretsIn(logs.join('\n'))).toEqual([]);
    expect(secretsIn(responses.join('\n'))).toEqual([]);
    await port.close();
    admin.disconnect();
  });

  const placed = (headers: Record<string, string> = {}, body: RequestInit['body'] = '{"order":1}'): RequestInit => ({
    method: 'POST',
    headers: { ...bearer(SHOP_TOKEN), 'idempotency-key': 'evt-1', ...headers },
    body,
  });

  it('202: appends the signed entry and answers event_id, stream and entry_id', async () => {
    const api = app();
    const res = await api.request('/v1/events/order.placed', placed({ traceparent: TRACEPARENT }));
    expect(res.status).toBe(202);
    const body = await res.json();
    const [entry] = await entries(admin, streams.orders);
    expect(body).toEqual({ event_id: 'evt-1', stream: streams.orders, entry_id: entry!.id });
    expect(entry!.fields).toMatchObject({ event: 'order.placed', event_id: 'evt-1', payload: '{"order":1}', traceparent: TRACEPARENT, key_id: 'shop-1' });
    expect(entry!.fields.sig).toMatch(/^[0-9a-f]{64}$/);
    expect(wakeUps).toEqual([[streams.orders]]);
  });

  it('carries a Flow-Key header, or a batch event\'s flow_key, as the entry\'s flow_key; refuses keys it cannot carry exactly', async () => {
    const api = app();
    expect((await api.request('/v1/events/order.placed', placed({ 'flow-key': 'order 42' }))).status).toBe(202);
    const batch = (events: unknown[]): RequestInit => ({
      method: 'POST',
      headers: { ...bearer(SHOP_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    });
    const res = await api.request('/v1/events', batch([{ event_type: 'order.placed', event_id: 'evt-2', payload: 1, flow_key: 'Zürich ✓' }]));
    expect(res.status).toBe(202);
    const stored = await entries(admin, streams.orders);
    expect(stored.map((e) => e.fields.flow_key)).toEqual(['order 42', 'Zürich ✓']);
    expect(Object.keys(stored[0]!.fields)).toEqual(['event', 'event_id', 'payload', 'flow_key', 'key_id', 'sig']);

    // A header value arrives as Latin-1 code units whatever bytes were sent: only ASCII is exact.
    const latin = await problem(await api.request('/v1/events/order.placed', placed({ 'idempotency-key': 'evt-3', 'flow-key': 'Zürich' })), 400, 'flow_key_invalid');
    expect(latin.detail).toMatch(/printable ASCII.*flow_key in a JSON batch/);
    await problem(await api.request('/v1/events/order.placed', placed({ 'idempotency-key': 'evt-4', 'flow-key': '' })), 400, 'flow_key_invalid');
    const refused = await problem(
      await api.request('/v1/events', batch([
        { event_type: 'order.placed', event_id: 'evt-5', payload: 1 },
        { event_type: 'order.placed', event_id: 'evt-6', payload: 1, flow_key: 'k'.repeat(1025) },
        { event_type: 'order.placed', event_id: 'evt-7', payload: 1, flow_key: 7 },
      ])),
      400,
      'flow_key_invalid',
    );
    expect((refused.invalid_events as Array<{ index: number; code: string }>).map(({ index, code }) => [index, code])).toEqual([
      [1, 'flow_key_invalid'],
      [2, 'invalid_request'],
    ]);
    expect(await admin.xlen(streams.orders)).toBe(2);
  });

  it('200 duplicate: the same Idempotency-Key and body inside the dedupe window appends nothing', async () => {
    const api = app();
    const first = (await (await api.request('/v1/events/order.placed', placed())).json()) as { entry_id: string };
    const again = await api.request('/v1/events/order.placed', placed());
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ event_id: 'evt-1', stream: streams.orders, entry_id: first.entry_id, duplicate: true });
    expect(await admin.xlen(streams.orders)).toBe(1);
  });

  it('422 idempotency_key_reused: the same Idempotency-Key with a different body appends nothing', async () => {
    const api = app();
    await api.request('/v1/events/order.placed', placed());
    const reused = await api.request('/v1/events/order.placed', placed({}, '{"order":"changed"}'));
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(await reused.json()).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await admin.xlen(streams.orders)).toBe(1);
  });

  it('carries the raw body byte-for-byte and publishes exclusive-stream events unsigned', async () => {
    const api = app();
    const res = await api.request('/v1/events/payment.charged', {
      method: 'POST',
      headers: { ...bearer(BILLING_TOKEN), 'idempotency-key': 'pay-1', 'content-type': 'text/plain; charset=utf-8' },
      body: 'ünïcødé  \n',
    });
    expect(res.status).toBe(202);
    const [entry] = await entries(admin, streams.payments);
    expect(entry!.fields).toEqual({ event: 'payment.charged', event_id: 'pay-1', payload: 'ünïcødé  \n' });
  });

  it('401: a missing, malformed or unknown token writes nothing', async () => {
    const api = app();
    const { authorization: _, ...noToken } = placed().headers as Record<string, string>;
    const body = await problem(await api.request('/v1/events/order.placed', { method: 'POST', headers: noToken, body: 'x' }), 401, 'token_missing');
    expect(body.detail).toBeUndefined();
    for (const authorization of [`Basic ${SHOP_TOKEN}`, `Bearer ${SHOP_TOKEN}x`, 'Bearer short', `Bearer ${SHOP_TOKEN.replace('6', '7')}`]) {
      const res = await api.request('/v1/events/order.placed', placed({ authorization }));
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      await problem(res, 401, 'token_invalid');
    }
    expect(await admin.exists(streams.orders)).toBe(0);
  });

  it('403: a token may publish only its own event types', async () => {
    const api = app();
    await problem(await api.request('/v1/events/payment.charged', placed()), 403, 'event_type_forbidden');
    await problem(await api.request('/v1/events/order.placed', placed(bearer(BILLING_TOKEN))), 403, 'event_type_forbidden');
    await problem(await api.request('/v1/events/audit.logged', placed()), 403, 'event_type_forbidden');
    expect(await admin.exists(streams.orders)).toBe(0);
    expect(await admin.exists(streams.payments)).toBe(0);
  });

  it('404: unknown event types (inherited object keys included) and unknown paths', async () => {
    const api = app();
    for (const type of ['order.refunded', 'constructor', '__proto__']) {
      await problem(await api.request(`/v1/events/${type}`, placed()), 404, 'event_type_unknown');
    }
    await problem(await api.request('/v1/nope', placed()), 404, 'route_not_found');
    await problem(await api.request('/v1/events', { method: 'GET' }), 404, 'route_not_found');
  });

  it('400: Idempotency-Key missing or invalid, traceparent malformed', async () => {
    const api = app();
    const { 'idempotency-key': _, ...noKey } = placed().headers as Record<string, string>;
    await problem(await api.request('/v1/events/order.placed', { method: 'POST', headers: noKey, body: 'x' }), 400, 'idempotency_key_missing');
    await problem(await api.request('/v1/events/order.placed', placed({ 'idempotency-key': 'has space' })), 400, 'idempotency_key_invalid');
    for (const traceparent of ['00-abc-01', TRACEPARENT.replace('4bf9', '4BF9'), `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, '']) {
      await problem(await api.request('/v1/events/order.placed', placed({ traceparent })), 400, 'traceparent_invalid');
    }
    expect(await admin.exists(streams.orders)).toBe(0);
  });

  it('413: a body over the limit, streamed or declared, is refused without being appended', async () => {
    const api = app({ bodyLimitBytes: 64 });
    const exact = await api.request('/v1/events/order.placed', placed({}, 'a'.repeat(64)));
    expect(exact.status).toBe(202);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i += 1) controller.enqueue(new Uint8Array(16).fill(98));
        controller.close();
      },
    });
    const init = { ...placed({ 'idempotency-key': 'evt-2' }, streamed), duplex: 'half' } as RequestInit;
    await problem(await api.request('/v1/events/order.placed', init), 413, 'body_too_large');
    await problem(await api.request('/v1/events/order.placed', placed({ 'idempotency-key': 'evt-3', 'content-length': '100000' }, 'small')), 413, 'body_too_large');
    const batch = JSON.stringify({ events: [{ event_type: 'order.placed', event_id: 'b', payload: 'x'.repeat(100) }] });
    await problem(await api.request('/v1/events', { method: 'POST', headers: { ...bearer(SHOP_TOKEN), 'content-type': 'application/json' }, body: batch }), 413, 'body_too_large');
    expect(await admin.xlen(streams.orders)).toBe(1);
  });

  describe('batch', () => {
    const batch = (events: unknown[], headers: Record<string, string> = {}): RequestInit => ({
      method: 'POST',
      headers: { ...bearer(SHOP_TOKEN), 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ events }),
    });
    const three = [
      { event_type: 'order.placed', event_id: 'b-1', payload: { order: 1, items: ['a'] } },
      { event_type: 'order.paid', event_id: 'b-2', payload: { base64: btoa('raw bytes') }, traceparent: TRACEPARENT },
      { event_type: 'order.placed', event_id: 'b-3', payload: 'a JSON string' },
    ];

    it('202: publishes every event in one Redis round trip, with per-event results', async () => {
      const api = app();
      await runtime.publisherFor('shop').publish({ eventType: 'order.placed', eventId: 'warm-up', payload: 'x' }); // loads the script
      const before = port.roundTrips;
      const res = await api.request('/v1/events', batch(three));
      expect(port.roundTrips - before).toBe(1);
      expect(res.status).toBe(202);
      const stored = (await entries(admin, streams.orders)).slice(1);
      expect(await res.json()).toEqual({
        results: three.map((e, i) => ({ event_id: e.event_id, event_type: e.event_type, stream: streams.orders, entry_id: stored[i]!.id, duplicate: false })),
      });
      expect(stored.map((e) => e.fields.payload)).toEqual(['{"order":1,"items":["a"]}', 'raw bytes', '"a JSON string"']);
      expect(stored[1]!.fields.traceparent).toBe(TRACEPARENT);
      expect(wakeUps).toEqual([[streams.orders]]);

      const replay = await api.request('/v1/events', batch(three, { 'content-type': 'Application/JSON; charset=utf-8' }));
      expect(replay.status).toBe(200);
      expect(((await replay.json()) as { results: Array<{ duplicate: boolean }> }).results.map((r) => r.duplicate)).toEqual([true, true, true]);
      expect(await admin.xlen(streams.orders)).toBe(4);
    });

    it('refuses the whole batch, naming every invalid event by index, when any event is unusable', async () => {
      const api = app();
      const mixed = [
        three[0],
        { event_type: 'payment.charged', event_id: 'b-x', payload: 1 },
        { event_type: 'order.gone', event_id: 'b-y', payload: 1 },
        { event_type: 'order.placed', event_id: 'b z', payload: 1 },
        { event_type: 'order.placed', event_id: 'b-t', payload: 1, traceparent: 'nope' },
        { event_type: 'order.placed', event_id: 'b-p', payload: { base64: 'not base64!' } },
        { event_type: 'order.placed', event_id: 'b-m' },
      ];
      const body = await problem(await api.request('/v1/events', batch(mixed)), 403, 'event_type_forbidden');
      expect((body.invalid_events as Array<{ index: number; code: string }>).map(({ index, code }) => [index, code])).toEqual([
        [1, 'event_type_forbidden'],
        [2, 'event_type_unknown'],
        [3, 'event_id_invalid'],
        [4, 'traceparent_invalid'],
        [5, 'payload_invalid'],
        [6, 'invalid_request'],
      ]);
      await problem(await api.request('/v1/events', batch([mixed[2]])), 404, 'event_type_unknown');
      expect(await admin.exists(streams.orders)).toBe(0);
      expect(wakeUps).toEqual([]);
    });

    it('400 for a malformed body or too many events; 415 unless the body is application/json', async () => {
      const api = app({ maxBatch: 2 });
      await problem(await api.request('/v1/events', batch(three)), 400, 'batch_too_large');
      await problem(await api.request('/v1/events', batch([])), 400, 'invalid_request');
      await problem(await api.request('/v1/events', { ...batch([]), body: '{"events": [' }), 400, 'invalid_request');
      await problem(await api.request('/v1/events', { ...batch([]), body: '{"events": [], "extra": 1}' }), 400, 'invalid_request');
      for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/jsonp' }]) {
        await problem(await api.request('/v1/events', batch(three.slice(0, 1), headers)), 415, 'content_type_unsupported');
      }
      const { 'content-type': _, ...untyped } = batch([]).headers as Record<string, string>;
      await problem(await api.request('/v1/events', { method: 'POST', headers: untyped, body: '{}' }), 415, 'content_type_unsupported');
      await problem(await api.request('/v1/events', batch(three, { authorization: 'Bearer wrong' })), 401, 'token_invalid');
      expect(await admin.exists(streams.orders)).toBe(0);
    });
  });

  it('a failing wake-up is logged and the publish still succeeds', async () => {
    const api = app({
      wakeUp: async () => {
        throw new Error('queue down');
      },
    });
    const res = await api.request('/v1/events/order.placed', placed());
    expect(res.status).toBe(202);
    expect(await admin.xlen(streams.orders)).toBe(1);
    expect(logs.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('wake-up failed'), detail: { streams: [streams.orders] }, error: { name: 'Error', message: 'queue down' } }),
    ]);
  });

  it('a wake-up that throws a value nothing can inspect is logged and the publish still succeeds', async () => {
    const revoked = Proxy.revocable(new Error('x'), {});
    revoked.revoke();
    const api = app({
      wakeUp: async () => {
        throw revoked.proxy;
      },
    });
    const res = await api.request('/v1/events/order.placed', placed());
    expect(res.status).toBe(202);
    expect(await admin.xlen(streams.orders)).toBe(1);
    expect(logs.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('wake-up failed'), error: { name: 'uninspectable' } }),
    ]);
  });

  it('/healthz answers 200; /readyz 200 after ensuring every group', async () => {
    const api = app();
    const health = await api.request('/healthz', { method: 'GET' });
    expect(health.status).toBe(200);
    const ready = await api.request('/readyz', { method: 'GET' });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: [
        { check: 'ping', subject: 'redis', ok: true },
        { check: 'config', subject: 'consumers[0]', ok: true },
        { check: 'group', subject: `${streams.orders}/fulfilment`, ok: true },
        { check: 'publisher', subject: 'shop', ok: true },
        { check: 'publisher', subject: 'billing', ok: true },
      ],
    });
    const groups = (await admin.xinfo('GROUPS', streams.orders)) as unknown[][];
    expect(groups.map((g) => g[1])).toEqual(['fulfilment']);
  });
});
