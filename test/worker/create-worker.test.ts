/**
 * The Worker's handlers in Node against the REST test server and the real Redis behind
 * it: fetch publishes and sends wake-ups, scheduled runs the cron's jobs, queue polls the
 * woken consumers and acks or retries each message. The built bundle runs in Miniflare in
 * miniflare.test.ts; here each decision is checked in detail.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createWorker } from '../../functions/cloudflare/create-worker';
import type { ExecutionContext, QueueMessage } from '../../functions/cloudflare/platform';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { POLL_CRON, secrets, SHOP_KEY, SHOP_TOKEN, TRIM_CRON, WAKE_UP_BINDING, workerDeployment, workerStreams } from './fixture';

const ctx: ExecutionContext = { waitUntil: () => {}, passThroughOnException: () => {} };

function message(id: string, body: unknown) {
  const settled: string[] = [];
  const msg: QueueMessage = { id, body, attempts: 1, ack: () => void settled.push('ack'), retry: () => void settled.push('retry') };
  return { msg, settled };
}

describe('Cloudflare Worker handlers (REST)', () => {
  let admin: Redis;
  let prefix: string;
  let streams: ReturnType<typeof workerStreams>;
  let logs: string[];
  let sent: Array<{ body: unknown; options: unknown }>;
  let env: Record<string, unknown>;
  let worker: ReturnType<typeof createWorker>;

  beforeEach(() => {
    admin = adminClient();
    prefix = uniquePrefix();
    streams = workerStreams(prefix);
    logs = [];
    sent = [];
    env = {
      ...secrets,
      UPSTASH_REDIS_REST_URL: inject('restUrl'),
      UPSTASH_REDIS_REST_TOKEN: inject('restToken'),
      [WAKE_UP_BINDING]: { send: async (body: unknown, options: unknown) => void sent.push({ body, options }) },
    };
    worker = createWorker(workerDeployment(prefix), { log: (line) => logs.push(line) });
  });
  afterEach(() => {
    const all = logs.join('\n');
    for (const secret of [SHOP_TOKEN, SHOP_KEY.slice(4), inject('restToken')]) expect(all).not.toContain(secret);
    admin.disconnect();
  });

  const publish = (type: string, id: string) =>
    worker.fetch(
      new Request(`https://edge.example/v1/events/${type}`, { method: 'POST', headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': id }, body: `{"id":"${id}"}` }),
      env,
      ctx,
    );
  const lines = () => logs.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('fetch publishes, and sends a wake-up only for streams a wake-up consumer reads', async () => {
    expect((await publish('order.placed', 'o-1')).status).toBe(202);
    expect(sent).toEqual([]);
    expect((await publish('event.logged', 'e-1')).status).toBe(202);
    expect(sent).toEqual([{ body: { streams: [streams.events] }, options: { contentType: 'json' } }]);
    expect(await admin.xlen(streams.orders)).toBe(1);
    expect(await admin.xlen(streams.events)).toBe(1);
    expect((await worker.fetch(new Request('https://edge.example/healthz'), env, ctx)).status).toBe(200);
  });

  it('scheduled polls on the poll cron (entries acked in Redis) and trims on the trim cron', async () => {
    await worker.scheduled({ cron: POLL_CRON, scheduledTime: Date.now() }, env, ctx); // creates the group
    await publish('order.placed', 'o-1');
    await publish('order.placed', 'o-2');
    await worker.scheduled({ cron: POLL_CRON, scheduledTime: Date.now() }, env, ctx);
    expect(await pendingIds(admin, streams.orders, 'fulfilment')).toEqual([]);
    const [group] = (await admin.xinfo('GROUPS', streams.orders)) as unknown[][];
    expect(group![group!.indexOf('entries-read') + 1]).toBe(2);
    expect(lines().filter((l) => l.job === 'poll').map((l) => [l.consumer, l.acked])).toEqual([
      ['poller', 0],
      ['poller', 2],
    ]);

    await worker.scheduled({ cron: TRIM_CRON, scheduledTime: Date.now() }, env, ctx);
    expect(await admin.xlen(streams.orders)).toBe(1); // the frontier entry stays
    expect(lines().filter((l) => l.job === 'trim')).toEqual([expect.objectContaining({ msg: 'trim run', removed: 1 })]);

    await worker.scheduled({ cron: '7 7 * * *', scheduledTime: Date.now() }, env, ctx);
    expect(lines().at(-1)).toMatchObject({ level: 'warn', detail: { cron: '7 7 * * *' } });
  });

  it('queue polls the woken consumers once per batch, acks valid messages and drops malformed ones', async () => {
    await publish('event.logged', 'e-1');
    const valid = message('m1', { streams: [streams.events] });
    const asText = message('m2', JSON.stringify({ streams: [streams.events, streams.orders] }));
    const malformed = message('m3', 'not a wake-up');
    const unrelated = message('m4', { streams: ['some:other:stream'] });
    await worker.queue({ queue: 'wake-ups', messages: [valid.msg, asText.msg, malformed.msg, unrelated.msg] }, env, ctx);
    expect([valid, asText, malformed, unrelated].map((m) => m.settled)).toEqual([['ack'], ['ack'], ['ack'], ['ack']]);
    // The group did not exist at publish time; startFrom 0-0 delivers the entry on creation.
    expect(await pendingIds(admin, streams.events, 'audit')).toEqual([]);
    expect(lines().filter((l) => l.job === 'poll').map((l) => [l.consumer, l.acked])).toEqual([['waker', 1]]);
    expect(lines().filter((l) => l.level === 'warn').map((l) => (l.detail as { id?: string }).id)).toEqual(['m3']);
  });

  it('retries the wake-ups whose poll failed, and fails a scheduled run whose job failed', async () => {
    await admin.set(streams.events, 'not a stream'); // XGROUP CREATE answers WRONGTYPE
    const failing = message('m1', { streams: [streams.events] });
    const wakeEveryone = message('m2', {}); // no stream list: wakes every wake-up consumer
    await worker.queue({ queue: 'wake-ups', messages: [failing.msg, wakeEveryone.msg] }, env, ctx);
    expect(failing.settled).toEqual(['retry']);
    expect(wakeEveryone.settled).toEqual(['retry']);
    expect(lines()).toEqual([expect.objectContaining({ level: 'error', msg: 'poll run failed', consumer: 'waker', error: expect.objectContaining({ code: 'REDIS_COMMAND_FAILED' }) })]);

    await admin.set(streams.orders, 'not a stream');
    await expect(worker.scheduled({ cron: POLL_CRON, scheduledTime: Date.now() }, env, ctx)).rejects.toThrow('1 of 1 jobs failed: poll poller');
  });

  it('answers 500 problem+json when a secret is missing, and runs without wake-ups (logging why) when the binding is', async () => {
    const { SHOP_TOKEN: _, ...noToken } = env;
    const res = await worker.fetch(new Request('https://edge.example/healthz'), noToken, ctx);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: 'server_misconfigured' });
    // A missing Queue binding costs only latency: the Worker keeps serving and polling.
    const { [WAKE_UP_BINDING]: __, ...noQueue } = env;
    expect((await worker.fetch(new Request('https://edge.example/healthz'), noQueue, ctx)).status).toBe(200);
    expect(lines().map((l) => [l.level, l.msg, (l.error as { message: string }).message])).toEqual([
      ['error', 'worker misconfigured', expect.stringContaining('SHOP_TOKEN: environment variable is not set')],
      ['warn', 'wake-ups disabled', expect.stringContaining(`no Queue producer binding named ${WAKE_UP_BINDING}`)],
    ]);
    const { UPSTASH_REDIS_REST_TOKEN: ___, ...noRedis } = env;
    await expect(worker.scheduled({ cron: POLL_CRON, scheduledTime: Date.now() }, noRedis, ctx)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
