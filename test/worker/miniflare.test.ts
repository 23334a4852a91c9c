/**
 * Issue 6 acceptance 3: the BUILT Worker (esbuild bundle of `createWorker(testConfig)`) runs
 * in Miniflare against the REST test server and the real Redis behind it. `fetch`
 * publishes; `scheduled` polls (the entries published over HTTP end up acked — read from
 * Redis) and trims; a publish's wake-up goes through the Cloudflare Queue to the `queue`
 * handler, which polls; `queue` also answers a direct dispatch with explicit acks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_COMPATIBILITY_DATE } from '../../infra/cloudflare/check';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { buildWorker } from './build-worker';
import { OPS_ADMIN_TOKEN, POLL_CRON, secrets, SHOP_TOKEN, TRIM_CRON, WAKE_UP_BINDING, workerStreams } from './fixture';

const QUEUE = 'wake-ups';

/** What Miniflare's worker fetcher offers besides fetch (not in the Fetcher typings). */
interface TriggerableWorker {
  scheduled(options: { cron: string; scheduledTime?: Date }): Promise<{ outcome: string; noRetry: boolean }>;
  queue(
    queueName: string,
    messages: Array<{ id: string; timestamp: Date; attempts: number; body: unknown }>,
  ): Promise<{ outcome: string; ackAll: boolean; retryBatch: { retry: boolean }; explicitAcks: string[]; retryMessages: Array<{ msgId: string }> }>;
}

async function entriesRead(admin: Redis, stream: string, group: string): Promise<number> {
  const groups = (await admin.xinfo('GROUPS', stream).catch(() => [])) as unknown[][];
  const row = groups.find((g) => g[g.indexOf('name') + 1] === group);
  return row ? Number(row[row.indexOf('entries-read') + 1]) : 0;
}

/** Waits for an effect of the platform's own queue delivery; the test timeout bounds it. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}

describe('built Worker in Miniflare (REST → real Redis)', () => {
  const prefix = uniquePrefix();
  const streams = workerStreams(prefix);
  const stdout: string[] = [];
  let work: string;
  let mf: Miniflare;
  let worker: TriggerableWorker;
  let admin: Redis;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'worker-build-'));
    const scriptPath = await buildWorker(resolve('test/worker/fixtures/worker-entry.ts'), work, { __TEST_PREFIX__: prefix });
    mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: work, // module names are relative to it; workerd refuses '..'
      compatibilityDate: MAX_COMPATIBILITY_DATE,
      bindings: { ...secrets, UPSTASH_REDIS_REST_URL: inject('restUrl'), UPSTASH_REDIS_REST_TOKEN: inject('restToken') },
      queueProducers: { [WAKE_UP_BINDING]: { queueName: QUEUE } },
      queueConsumers: { [QUEUE]: { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 1 } },
      handleRuntimeStdio(out: NodeJS.ReadableStream, err: NodeJS.ReadableStream) {
        out.on('data', (chunk: Buffer) => stdout.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
        err.on('data', (chunk: Buffer) => process.stderr.write(chunk));
      },
    });
    worker = (await mf.getWorker()) as unknown as TriggerableWorker;
    admin = adminClient();
  }, 60_000);

  afterAll(async () => {
    await mf?.dispose();
    admin?.disconnect();
    rmSync(work, { recursive: true, force: true });
  });

  const publish = (type: string, id: string) =>
    mf.dispatchFetch(`https://edge.example/v1/events/${type}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': id },
      body: JSON.stringify({ id }),
    });
  const logLines = () => stdout.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : []));

  it('fetch publishes; scheduled polls (entries acked in Redis) and then trims', async () => {
    for (const id of ['o-1', 'o-2']) {
      const res = await publish('order.placed', id);
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ event_id: id, stream: streams.orders });
    }
    expect(await admin.xlen(streams.orders)).toBe(2);

    expect(await worker.scheduled({ cron: POLL_CRON, scheduledTime: new Date() })).toMatchObject({ outcome: 'ok' });
    expect(await entriesRead(admin, streams.orders, 'fulfilment')).toBe(2);
    expect(await pendingIds(admin, streams.orders, 'fulfilment')).toEqual([]);

    expect(await worker.scheduled({ cron: TRIM_CRON, scheduledTime: new Date() })).toMatchObject({ outcome: 'ok' });
    expect(await admin.xlen(streams.orders)).toBe(1); // everything below the group's frontier

    await eventually(async () => logLines().some((l) => l.job === 'trim'));
    expect(logLines().filter((l) => l.job === 'poll' && l.consumer === 'poller').map((l) => l.acked)).toEqual([2]);
  });

  it('serves the ops dashboard: login first, then the overview with the samples the scheduled poll recorded', async () => {
    const login = await mf.dispatchFetch('https://edge.example/ops', { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/ops/login');
    const overview = await mf.dispatchFetch('https://edge.example/ops/overview.json', { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(overview.status).toBe(200);
    const body = (await overview.json()) as { consumers: Array<{ backlog: { consumer: string }; samples: unknown[] }> };
    const poller = body.consumers.find((c) => c.backlog.consumer === 'poller')!;
    expect(poller.samples.length).toBeGreaterThan(0);
    const page = await mf.dispatchFetch('https://edge.example/ops', { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}`, accept: 'text/html' } });
    expect(await page.text()).toContain('<circle class="point"');
  });

  it('a publish wakes the queue handler through the Cloudflare Queue, which polls the woken consumer', { timeout: 30_000 }, async () => {
    expect((await publish('event.logged', 'e-1')).status).toBe(202);
    // Read (entries-read) and then settled (nothing pending): the poll's two round trips.
    await eventually(async () => (await entriesRead(admin, streams.events, 'audit')) === 1 && (await pendingIds(admin, streams.events, 'audit')).length === 0);
    await eventually(async () => logLines().some((l) => l.job === 'poll' && l.consumer === 'waker'));
  });

  it('schedules through the Delay and Deliver-At headers (a bad one is a 400 naming it); the delayed wake-up is accepted by the Queue', { timeout: 30_000 }, async () => {
    const scheduled = (type: string, id: string, headers: Record<string, string>) =>
      mf.dispatchFetch(`https://edge.example/v1/events/${type}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': id, ...headers },
        body: JSON.stringify({ id }),
      });
    const lengthBefore = await admin.xlen(streams.orders);
    const delayed = await scheduled('order.placed', 's-1', { delay: '90s' });
    expect(delayed.status).toBe(202);
    expect(await delayed.json()).toMatchObject({ event_id: 's-1', entry_id: null, scheduled: true, deliver_at: expect.any(String) });
    const due = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    const written = new Date(due.getTime() + 3_600_000).toISOString().replace(/\.000Z$/, '+01:00'); // the same instant at UTC+01:00
    const at = await scheduled('order.placed', 's-2', { 'deliver-at': written });
    expect(await at.json()).toMatchObject({ event_id: 's-2', scheduled: true, deliver_at: due.toISOString() });
    expect(await admin.zrange(`${streams.orders}:schedule`, 0, -1)).toEqual(['s-1', 's-2']);
    expect(await admin.xlen(streams.orders)).toBe(lengthBefore);

    const bad = await scheduled('order.placed', 's-3', { delay: '90' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'delay_invalid', header: 'Delay' });

    // A wake-up consumer's stream: the wake-up goes to the Queue with delaySeconds, and arrives.
    const polls = () => logLines().filter((l) => l.job === 'poll' && l.consumer === 'waker').length;
    const before = polls();
    expect((await scheduled('event.logged', 's-4', { delay: '1s' })).status).toBe(202);
    await eventually(async () => polls() > before);
    expect(logLines().filter((l) => l.msg === 'wake-up not sent')).toEqual([]);
    // The poll it woke moved the event into its stream (claim.lua moves what is due).
    await eventually(async () => (await admin.zscore(`${streams.events}:schedule`, 's-4')) === null);
    const moved = (await admin.xrange(streams.events, '-', '+')) as Array<[string, string[]]>;
    expect(moved.filter(([, fields]) => fields.includes('s-4'))).toHaveLength(1);
  });

  it('queue polls on a dispatched wake-up and acks each message explicitly', async () => {
    // Appended directly, so no wake-up of its own races this dispatch (the stream is exclusive: unsigned).
    const readBefore = await entriesRead(admin, streams.events, 'audit');
    await admin.xadd(streams.events, '*', 'event', 'event.logged', 'event_id', 'e-2', 'payload', '{}');
    const result = await worker.queue(QUEUE, [
      { id: 'm-1', timestamp: new Date(), attempts: 1, body: { streams: [streams.events] } },
      { id: 'm-2', timestamp: new Date(), attempts: 1, body: 'not a wake-up' },
    ]);
    expect(result).toMatchObject({ outcome: 'ok', ackAll: false, retryMessages: [] });
    expect([...result.explicitAcks].sort()).toEqual(['m-1', 'm-2']);
    // The poll the wake-up ran read everything, e-2 included (the stream is never trimmed here).
    expect(await entriesRead(admin, streams.events, 'audit')).toBe(await admin.xlen(streams.events));
    expect(await entriesRead(admin, streams.events, 'audit')).toBeGreaterThan(readBefore);
    expect(await pendingIds(admin, streams.events, 'audit')).toEqual([]);
  });
});
