/**
 * Issue 17 §2: every platform's log lines follow the one schema (src/deployment/log-line.ts).
 * Real lines are captured from each platform — the Lambda handlers invoked in-process, the
 * built Worker in Miniflare, the local stack's consumer loops and publish API — for a
 * successful run, a failed run (Redis down) and a failed wake-up, and every line is
 * validated; none may hold a secret value.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLambdaHandlers } from '../../functions/aws/index';
import { MAX_COMPATIBILITY_DATE } from '../../infra/cloudflare/check';
import { createConsumerLoops } from '../../local/consumer-loops';
import { connectTcp } from '../../src/deployment/connect-tcp';
import { formatLogLine, logLineProblems } from '../../src/deployment/log-line';
import { describeError } from '../../src/web/log';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { nodeHmac } from '../../src/node/crypto';
import { baseEnv, deployment, functionUrlEvent, harness, lambdaContext, scheduledEvent, SHOP_TOKEN, sqsEvent, sqsRecord, streamsFor } from '../lambda/fixtures';
import { uniquePrefix } from '../support/redis';
import { buildWorker } from '../worker/build-worker';
import { POLL_CRON, secrets as workerSecrets, SHOP_TOKEN as WORKER_TOKEN, TRIM_CRON, WAKE_UP_BINDING } from '../worker/fixture';

/** A local port nothing listens on: Redis "down". */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

type Line = Record<string, unknown>;

/** Every line conforms and holds no secret; returns the parsed lines. */
function validated(lines: readonly string[], secrets: readonly string[]): Line[] {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect({ line, problems: logLineProblems(line) }).toEqual({ line, problems: [] });
    for (const secret of secrets) expect(line).not.toContain(secret);
  }
  return lines.map((line) => JSON.parse(line) as Line);
}

const msgs = (lines: readonly Line[]) => lines.map((l) => l.msg);
const LAMBDA_SECRETS = [SHOP_TOKEN, baseEnv().ORDERS_KEY!.slice(4)];

const placeOrder = (eventId: string) =>
  functionUrlEvent({
    method: 'POST',
    path: '/v1/events/order.placed',
    headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': eventId, 'content-type': 'application/json' },
    body: '{"sku":"A","qty":1}',
  });

describe('Lambda handlers (in-process)', () => {
  it('a successful publish, scheduled poll, wake-up poll and trim with backlog probe', async () => {
    const run = harness();
    const handlers = createLambdaHandlers(deployment(uniquePrefix()), { ...run.deps, sqs: { send: async () => undefined } });
    expect((await handlers.publish(placeOrder('o-1'), lambdaContext(10_000))).statusCode).toBe(202);
    await handlers.poll(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000));
    await handlers.wakeUp(sqsEvent(sqsRecord('m-1', '{"streams":[]}'), sqsRecord('m-2', 'not a wake-up')), lambdaContext(60_000));
    await handlers.trim(scheduledEvent({}));
    await run.close();
    const lines = validated(run.lines, LAMBDA_SECRETS);
    expect(msgs(lines)).toEqual(expect.arrayContaining(['poll run', 'malformed wake-up messages', 'trim run', 'backlog']));
    expect(lines.find((l) => l.msg === 'backlog')).toMatchObject({ job: 'backlog', pending: expect.any(Number), _aws: expect.any(Object) });
  });

  it('a failed run (Redis down): the poll, wake-up and trim failures', async () => {
    const run = harness({ env: { ...baseEnv(), REDIS_URL: `redis://127.0.0.1:${await deadPort()}` } });
    const handlers = createLambdaHandlers(deployment(uniquePrefix()), run.deps);
    await expect(handlers.poll(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000))).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    await handlers.wakeUp(sqsEvent(sqsRecord('m-1', '{"streams":[]}')), lambdaContext(60_000)).catch(() => undefined);
    await handlers.trim(scheduledEvent({})).catch(() => undefined);
    await run.close();
    const lines = validated(run.lines, LAMBDA_SECRETS);
    expect(lines.find((l) => l.msg === 'poll run failed')).toMatchObject({ level: 'error', job: 'poll', consumer: 'fulfil', error: { code: 'REDIS_UNAVAILABLE' } });
    expect(msgs(lines)).toContain('trim run failed');
  });

  it('a failed wake-up: the publish succeeds and says so', async () => {
    const run = harness();
    const handlers = createLambdaHandlers(deployment(uniquePrefix()), {
      ...run.deps,
      sqs: { send: async () => Promise.reject(Object.assign(new Error('AccessDenied'), { name: 'AccessDeniedException' })) },
    });
    expect((await handlers.publish(placeOrder('o-2'), lambdaContext(10_000))).statusCode).toBe(202);
    const noQueue = harness({ env: { ...baseEnv(), WAKEUP_QUEUE_URL: '' } });
    const poll = createLambdaHandlers(deployment(uniquePrefix()), noQueue.deps).poll;
    await poll(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000));
    await Promise.all([run.close(), noQueue.close()]);
    expect(validated(run.lines, LAMBDA_SECRETS)).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'wake-up not sent', error: { name: 'AccessDeniedException', message: 'AccessDenied' } }),
    ]);
    expect(msgs(validated(noQueue.lines, LAMBDA_SECRETS))).toEqual(['wake-ups disabled', 'poll run']);
  });
});

describe('local stack (consumer loops, publish API)', () => {
  const LOCAL_SECRETS = LAMBDA_SECRETS;

  async function loopsOver(env: Record<string, string>, wakeUp?: () => Promise<void>) {
    const config = deployment(uniquePrefix());
    const lines: string[] = [];
    const port = connectTcp(config, env);
    const runtime = createRuntime(config, { port, env, hmac: nodeHmac, wakeUp, log: (line) => lines.push(line) });
    const controller = new AbortController();
    const loops = createConsumerLoops({ runtime, log: (line) => lines.push(line), signal: controller.signal });
    const app = createPublishApp({ runtime, env, log: (line) => lines.push(line) });
    const publish = (id: string) =>
      app.request('/v1/events/order.placed', { method: 'POST', headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': id }, body: '{}' });
    const close = async () => {
      controller.abort();
      await loops.idle();
      await port.close();
    };
    return { lines, loops, publish, close };
  }

  it('a successful poll and trim run', async () => {
    const local = await loopsOver(baseEnv());
    expect((await local.publish('o-1')).status).toBe(202);
    local.loops.triggerAll();
    await local.loops.idle();
    await local.loops.trim();
    await local.close();
    expect(msgs(validated(local.lines, LOCAL_SECRETS))).toEqual(expect.arrayContaining(['poll run', 'trim run']));
  });

  it('a failed run (Redis down), and the publish API answering 503', async () => {
    const local = await loopsOver({ ...baseEnv(), REDIS_URL: `redis://127.0.0.1:${await deadPort()}` });
    expect((await local.publish('o-1')).status).toBe(503);
    local.loops.triggerAll();
    await local.loops.idle();
    await local.close();
    const lines = validated(local.lines, LOCAL_SECRETS);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', msg: 'poll run failed', consumer: 'fulfil', error: expect.objectContaining({ code: 'REDIS_UNAVAILABLE' }) }));
    expect(msgs(lines)).toContain('redis unavailable');
  });

  it('a failed wake-up', async () => {
    const local = await loopsOver(baseEnv(), () => Promise.reject(new Error('queue down')));
    expect((await local.publish('o-1')).status).toBe(202);
    await local.close();
    expect(validated(local.lines, LOCAL_SECRETS)).toEqual([expect.objectContaining({ msg: 'wake-up not sent', error: { name: 'Error', message: 'queue down' } })]);
  });
});

describe('built Worker in Miniflare', () => {
  let work: string;
  let scriptPath: string;
  const WORKER_SECRETS = [WORKER_TOKEN, workerSecrets.SHOP_KEY.slice(4), inject('restToken')];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'log-schema-worker-'));
    scriptPath = await buildWorker(resolve('test/worker/fixtures/worker-entry.ts'), work, { __TEST_PREFIX__: uniquePrefix() });
  }, 60_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** A Miniflare over the built Worker; its stdout JSON lines land in `lines`. */
  async function miniflare(bindings: Record<string, unknown>, queue: boolean) {
    const lines: string[] = [];
    const mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: work,
      compatibilityDate: MAX_COMPATIBILITY_DATE,
      bindings: { ...workerSecrets, ...bindings } as Record<string, string>,
      ...(queue ? { queueProducers: { [WAKE_UP_BINDING]: { queueName: 'log-schema-wake-ups' } } } : {}),
      handleRuntimeStdio(out: NodeJS.ReadableStream, err: NodeJS.ReadableStream) {
        out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter((l) => l.startsWith('{'))));
        err.on('data', (chunk: Buffer) => process.stderr.write(chunk));
      },
    });
    const worker = (await mf.getWorker()) as unknown as { scheduled(o: { cron: string; scheduledTime?: Date }): Promise<{ outcome: string }> };
    const publish = (id: string) =>
      mf.dispatchFetch('https://edge.example/v1/events/order.placed', { method: 'POST', headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'idempotency-key': id }, body: '{}' });
    return { mf, worker, publish, lines };
  }

  /** stdout reaches the test asynchronously: wait for the lines a check needs. */
  async function eventually(check: () => boolean): Promise<void> {
    for (let i = 0; i < 100 && !check(); i += 1) await new Promise((r) => setTimeout(r, 50));
  }

  it('a successful poll, trim and backlog probe (one backlog line per consumer)', { timeout: 60_000 }, async () => {
    const { mf, worker, publish, lines } = await miniflare({ UPSTASH_REDIS_REST_URL: inject('restUrl'), UPSTASH_REDIS_REST_TOKEN: inject('restToken') }, true);
    try {
      expect((await publish('o-1')).status).toBe(202);
      expect(await worker.scheduled({ cron: POLL_CRON })).toMatchObject({ outcome: 'ok' });
      expect(await worker.scheduled({ cron: TRIM_CRON })).toMatchObject({ outcome: 'ok' });
      await eventually(() => lines.filter((l) => l.includes('"job":"backlog"')).length >= 2);
    } finally {
      await mf.dispose();
    }
    const parsed = validated(lines, WORKER_SECRETS);
    expect(parsed.find((l) => l.msg === 'poll run')).toMatchObject({ consumer: 'poller', acked: 1 });
    // The poller's group exists (it polled); the waker never ran: its group is not created yet.
    expect(parsed.find((l) => l.msg === 'backlog' && l.consumer === 'poller')).toMatchObject({ pending: 0, oldestPendingAgeMs: 0, deadLetters: 0, lag: 0 });
    expect(parsed.find((l) => l.consumer === 'waker' && l.job === 'backlog')).toMatchObject({ msg: 'backlog', pending: 0, detail: { group: 'not created yet' } });
    expect(parsed.some((l) => '_aws' in l)).toBe(false);
  });

  it('a failed run (Redis down) and a failed wake-up (no Queue binding)', { timeout: 60_000 }, async () => {
    const down = `http://127.0.0.1:${await deadPort()}`;
    const { mf, worker, publish, lines } = await miniflare({ UPSTASH_REDIS_REST_URL: down, UPSTASH_REDIS_REST_TOKEN: inject('restToken') }, false);
    try {
      expect((await publish('o-1')).status).toBe(503);
      expect(await worker.scheduled({ cron: POLL_CRON })).toMatchObject({ outcome: 'exception' });
      await eventually(() => lines.some((l) => l.includes('poll run failed')));
    } finally {
      await mf.dispose();
    }
    const parsed = validated(lines, WORKER_SECRETS);
    expect(parsed).toContainEqual(expect.objectContaining({ level: 'error', msg: 'poll run failed', consumer: 'poller', error: expect.objectContaining({ code: 'REDIS_UNAVAILABLE' }) }));
    expect(msgs(parsed)).toEqual(expect.arrayContaining(['wake-ups disabled', 'redis unavailable']));
  });
});

describe('formatLogLine', () => {
  it('keeps an error already described (describeError) as it was, not as a thrown object', () => {
    const described = describeError(Object.assign(new Error('down'), { code: 'REDIS_UNAVAILABLE' }));
    const line = JSON.parse(formatLogLine({ level: 'error', msg: 'x', deployment: 'd', timestamp: 1, error: described })) as Line;
    expect(line.error).toEqual({ name: 'Error', code: 'REDIS_UNAVAILABLE', message: 'down' });
  });
});

describe('the validator', () => {
  const ok = { level: 'info', msg: 'poll run', deployment: 'd', timestamp: 1_777_000_000_000 };
  it('rejects unknown fields, stack traces, wrong types and missing fields', () => {
    expect(logLineProblems(JSON.stringify(ok))).toEqual([]);
    expect(logLineProblems({ ...ok, token: 'x' })).toEqual(['token: not a field of the log-line schema']);
    expect(logLineProblems({ ...ok, error: { name: 'Error', message: 'boom\n    at f (x.js:1:1)' } })).toEqual(['error.message: holds a stack trace']);
    expect(logLineProblems({ ...ok, error: { name: 'Error', stack: 's' } })).toEqual(['error.stack: not allowed (name, code, message only)']);
    expect(logLineProblems({ ...ok, acked: '3', level: 'debug' })).toEqual(['level: must be one of info, warn, error', 'acked: must be a finite number']);
    expect(logLineProblems({ level: 'info', msg: 'x' })).toEqual(['deployment: missing', 'timestamp: missing']);
    expect(logLineProblems('not json')).toEqual(['not JSON']);
  });
});
