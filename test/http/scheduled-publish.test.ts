/**
 * Scheduled delivery through the HTTP publish API (SPEC §5.6, §6.2), on every Redis client:
 * the `Deliver-At` and `Delay` headers (and a batch event's `deliver_at` / `delay`), what the
 * API answers, what Redis holds afterwards (the schedule, not the stream), the bounds, and a
 * 400 problem naming the header for every bad value — with nothing written. Wake-ups for
 * scheduled events carry the time left to their due time.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { PROBLEM_CONTENT_TYPE } from '../../src/web/problems';
import { meterPort, type MeteredPort } from '../../src/redis/metered';
import { clientKinds } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';
import { redisNow, scheduleOf } from '../redis/schedule-fixtures';
import { bearer, env, publishDeployment, SHOP_TOKEN, streamsOf, type Streams } from './fixture';

const DAY_MS = 86_400_000;

describe.each(clientKinds)('scheduled publishes over HTTP, $name', (kind) => {
  let port: MeteredPort;
  let admin: Redis;
  let streams: Streams;
  let wakeUps: Array<{ streams: string[]; delayMs: number | undefined }>;
  let api: { request(path: string, init: RequestInit): Promise<Response> };

  beforeEach(() => {
    port = meterPort(kind.connect());
    admin = adminClient();
    wakeUps = [];
    const prefix = uniquePrefix();
    streams = streamsOf(prefix);
    const runtime = createRuntime(publishDeployment(prefix), { port, env });
    const app = createPublishApp({ runtime, env, log: () => {}, wakeUp: async (s, delayMs) => void wakeUps.push({ streams: [...s], delayMs }) });
    api = { request: async (path, init) => app.request(path, init) };
  });
  afterEach(async () => {
    await port.close();
    admin.disconnect();
  });

  const placed = (headers: Record<string, string>, id = 'evt-1'): RequestInit => ({
    method: 'POST',
    headers: { ...bearer(SHOP_TOKEN), 'idempotency-key': id, ...headers },
    body: '{"order":1}',
  });
  const batch = (events: unknown[], headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { ...bearer(SHOP_TOKEN), 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ events }),
  });

  async function problem(res: Response, code: string, header?: string) {
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 400, code, type: `urn:saga-streams:problem:${code}` });
    if (header !== undefined) expect(body).toMatchObject({ header, detail: expect.stringContaining(header) });
    return body;
  }

  it('202 with Delay: scheduled on the Redis clock, not appended; a wake-up delayed to the due time', async () => {
    const before = await redisNow(admin);
    const res = await api.request('/v1/events/order.placed', placed({ delay: '90s' }));
    const after = await redisNow(admin);
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ event_id: 'evt-1', stream: streams.orders, entry_id: null, scheduled: true, deliver_at: expect.any(String) });
    const due = Date.parse(body.deliver_at as string);
    expect(due).toBeGreaterThanOrEqual(before + 90_000);
    expect(due).toBeLessThanOrEqual(after + 90_000);
    expect(await admin.exists(streams.orders)).toBe(0);
    expect((await scheduleOf(admin, streams.orders)).due).toEqual(new Map([['evt-1', due]]));
    // Whole seconds, rounded up from what Redis said was left: never before the due time.
    expect(wakeUps).toEqual([{ streams: [streams.orders], delayMs: 90_000 }]);
  });

  it('202 with Deliver-At (any offset), and 200 duplicate for a repeat at another time', async () => {
    const at = new Date((await redisNow(admin)) + 3_600_000);
    at.setUTCMilliseconds(250);
    // The same instant written at UTC+02:00.
    const local = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const first = await api.request('/v1/events/order.placed', placed({ 'deliver-at': local }));
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ entry_id: null, scheduled: true, deliver_at: at.toISOString() });

    const again = await api.request('/v1/events/order.placed', placed({ delay: '5s' }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ event_id: 'evt-1', stream: streams.orders, entry_id: null, scheduled: true, deliver_at: at.toISOString(), duplicate: true });
    const immediate = await api.request('/v1/events/order.placed', placed({}));
    expect(immediate.status).toBe(200);
    expect(await immediate.json()).toMatchObject({ duplicate: true, scheduled: true, deliver_at: at.toISOString() });
    expect(await admin.exists(streams.orders)).toBe(0);
  });

  it('appends at once for a Deliver-At already past or Delay 0s (202 with an entry id)', async () => {
    const past = await api.request('/v1/events/order.placed', placed({ 'deliver-at': '2001-02-03T04:05:06Z' }, 'past-1'));
    expect(past.status).toBe(202);
    expect(await past.json()).toEqual({ event_id: 'past-1', stream: streams.orders, entry_id: expect.stringMatching(/^\d+-\d+$/) });
    const zero = await api.request('/v1/events/order.placed', placed({ delay: '0s' }, 'zero-1'));
    expect(await zero.json()).toMatchObject({ entry_id: expect.stringMatching(/^\d+-\d+$/) });
    expect(await admin.xlen(streams.orders)).toBe(2);
    expect(wakeUps).toEqual([{ streams: [streams.orders], delayMs: undefined }, { streams: [streams.orders], delayMs: undefined }]);
  });

  it.each([
    ['Deliver-At without an offset', { 'deliver-at': '2030-01-01T00:00:00' }, 'deliver_at_invalid', 'Deliver-At'],
    ['Deliver-At as a date only', { 'deliver-at': '2030-01-01' }, 'deliver_at_invalid', 'Deliver-At'],
    ['Deliver-At on an impossible day', { 'deliver-at': '2030-02-30T00:00:00Z' }, 'deliver_at_invalid', 'Deliver-At'],
    ['Deliver-At as epoch ms', { 'deliver-at': '1893456000000' }, 'deliver_at_invalid', 'Deliver-At'],
    ['Deliver-At past the bound', { 'deliver-at': new Date(Date.now() + 366 * DAY_MS).toISOString() }, 'deliver_at_invalid', 'Deliver-At'],
    ['Delay without a unit', { delay: '90' }, 'delay_invalid', 'Delay'],
    ['a negative Delay', { delay: '-5s' }, 'delay_invalid', 'Delay'],
    ['a fractional Delay', { delay: '1.5s' }, 'delay_invalid', 'Delay'],
    ['Delay past the bound', { delay: '366d' }, 'delay_invalid', 'Delay'],
    ['both headers', { delay: '5s', 'deliver-at': '2030-01-01T00:00:00Z' }, 'schedule_conflict', 'Deliver-At'],
  ])('400 for %s, naming the header, with nothing written', async (_, headers, code, header) => {
    await problem(await api.request('/v1/events/order.placed', placed(headers)), code, header);
    expect(port.roundTrips).toBe(0);
    expect(await admin.keys(`${streams.orders}*`)).toEqual([]);
    expect(wakeUps).toEqual([]);
  });

  it('accepts the bound itself: Delay 365d', async () => {
    const res = await api.request('/v1/events/order.placed', placed({ delay: '365d' }));
    expect(res.status).toBe(202);
    expect((await scheduleOf(admin, streams.orders)).due.size).toBe(1);
    // Past the 12-hour (Queues) and 15-minute (SQS) bounds: the sender decides; the delay is passed on.
    expect(wakeUps).toEqual([{ streams: [streams.orders], delayMs: 365 * DAY_MS }]);
  });

  it('batch: each event its own due time, or the headers for all; one due time per event', async () => {
    const at = new Date((await redisNow(admin)) + 7_200_000).toISOString();
    const res = await api.request(
      '/v1/events',
      batch([
        { event_type: 'order.placed', event_id: 'b1', payload: { n: 1 }, delay: '10m' },
        { event_type: 'order.placed', event_id: 'b2', payload: { n: 2 }, deliver_at: at },
        { event_type: 'order.placed', event_id: 'b3', payload: { n: 3 } },
      ]),
    );
    expect(res.status).toBe(202);
    const { results } = (await res.json()) as { results: Array<Record<string, unknown>> };
    expect(results.map((r) => [r.event_id, r.scheduled ?? false, r.entry_id === null])).toEqual([
      ['b1', true, true],
      ['b2', true, true],
      ['b3', false, false],
    ]);
    expect(results[1]).toMatchObject({ deliver_at: at });
    expect([...(await scheduleOf(admin, streams.orders)).due.keys()].sort()).toEqual(['b1', 'b2']);
    expect(await admin.xlen(streams.orders)).toBe(1);
    expect(wakeUps.map((w) => w.delayMs)).toEqual([undefined, 600_000, expect.any(Number)]);

    const all = await api.request('/v1/events', batch([{ event_type: 'order.placed', event_id: 'h1', payload: 1 }, { event_type: 'order.placed', event_id: 'h2', payload: 2 }], { delay: '1h' }));
    expect(all.status).toBe(202);
    expect([...(await scheduleOf(admin, streams.orders)).due.keys()].sort()).toEqual(['b1', 'b2', 'h1', 'h2']);
  });

  it.each([
    ['a bad delay', [{ event_type: 'order.placed', event_id: 'x1', payload: 1, delay: 'soon' }], {}, 'delay_invalid', 'delay'],
    ['a bad deliver_at', [{ event_type: 'order.placed', event_id: 'x1', payload: 1, deliver_at: 'tomorrow' }], {}, 'deliver_at_invalid', 'deliver_at'],
    ['both members', [{ event_type: 'order.placed', event_id: 'x1', payload: 1, delay: '1s', deliver_at: '2030-01-01T00:00:00Z' }], {}, 'schedule_conflict', 'deliver_at'],
    ['a member beside a header', [{ event_type: 'order.placed', event_id: 'x1', payload: 1, delay: '1s' }], { delay: '2s' }, 'schedule_conflict', 'header'],
  ])('batch 400 for %s, naming the event and the member, with nothing written', async (_, events, headers, code, named) => {
    const body = await problem(await api.request('/v1/events', batch([{ event_type: 'order.placed', event_id: 'ok', payload: 0 }, ...events], headers)), code);
    expect(body.invalid_events).toEqual([{ index: 1, code, detail: expect.stringMatching(new RegExp(`^event 1: .*${named}`)) }]);
    expect(port.roundTrips).toBe(0);
    expect(await admin.keys(`${streams.orders}*`)).toEqual([]);
  });

  it('400 naming the header when the publisher refuses a due time the server clock let through', async () => {
    // A server clock a day fast passes 365.5 days ahead; the publisher's (and Redis's) does not.
    const prefix = uniquePrefix();
    streams = streamsOf(prefix);
    const runtime = createRuntime(publishDeployment(prefix), { port, env });
    const fast = createPublishApp({ runtime, env, log: () => {}, now: () => Date.now() + DAY_MS });
    const at = new Date(Date.now() + 365.5 * DAY_MS).toISOString();
    await problem(await fast.request('/v1/events/order.placed', placed({ 'deliver-at': at })), 'deliver_at_invalid', 'Deliver-At');
    expect(await admin.keys(`${streams.orders}*`)).toEqual([]);
  });

  it('the runtime publishers (what AWS and Workers run) send a scheduled wake-up delayed to the due time', async () => {
    const prefix = uniquePrefix();
    streams = streamsOf(prefix);
    const sent: Array<{ streams: string[]; delayMs: number | undefined }> = [];
    const runtime = createRuntime(publishDeployment(prefix), { port, env, wakeUp: async (s, delayMs) => void sent.push({ streams: [...s], delayMs }) });
    const publisher = runtime.publisherFor('shop');
    await publisher.publish({ eventType: 'order.placed', eventId: 'w1', payload: '{}' }, { delayMs: 42_400 });
    await publisher.publish({ eventType: 'order.placed', eventId: 'w2', payload: '{}' });
    await publisher.publishBatch([
      { eventType: 'order.placed', eventId: 'w3', payload: '{}', delayMs: 42_400 },
      { eventType: 'order.placed', eventId: 'w4', payload: '{}' },
    ]);
    expect(sent).toEqual([
      { streams: [streams.orders], delayMs: 43_000 },
      { streams: [streams.orders], delayMs: undefined },
      { streams: [streams.orders], delayMs: undefined },
      { streams: [streams.orders], delayMs: 43_000 },
    ]);
  });

  it('batch 400 naming the header when a batch header is bad', async () => {
    await problem(await api.request('/v1/events', batch([{ event_type: 'order.placed', event_id: 'x1', payload: 1 }], { 'deliver-at': 'never' })), 'deliver_at_invalid', 'Deliver-At');
    expect(port.roundTrips).toBe(0);
  });
});
