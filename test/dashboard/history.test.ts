/**
 * The dashboard's history in Redis (issue 17 §1), over real Redis: a poll run of a deployment
 * with the dashboard enabled leaves one age sample and one run record, in one extra round
 * trip; runs ending in the same bucket share a sample (acks summed); idle runs go to a list of
 * their own so they never push the runs that did something away; lists are capped; a failed
 * record costs one log line and never the run; a deployment without the dashboard writes
 * nothing. The overview and runs pages read it back.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDashboardApp } from '../../src/dashboard/app';
import { ACTIVE_RUNS_KEPT, historyKeys, IDLE_RUNS_KEPT, jobRunsKey, SAMPLE_BUCKET_MS, SAMPLES_KEPT } from '../../src/deployment/run-history';
import { parseSample } from '../../src/dashboard/read-history';
import { runPollJob, runTrimJob } from '../../src/deployment/jobs';
import { createRuntime } from '../../src/deployment/runtime';
import { createLogger } from '../../src/web/log';
import { opsRecordScript } from '../../src/generated/lua-scripts';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisCommand, RedisPort } from '../../src/redis/port';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { adminClient, append, uniquePrefix } from '../support/redis';
import { useClusterPerSuite, type ClusterHandles } from '../support/redis-suite';
import { env, publishDeployment, streamsOf } from '../http/fixture';

const ADMIN_TOKEN = 'admin-token-history-0123';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const withDashboard = { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' } };

/** Counts exchanges, so a test can tell how many round trips the record added. */
function counting(port: RedisPort) {
  const exchanges: RedisCommand[][] = [];
  const counted: RedisPort = { ...port, exchange: (commands) => (exchanges.push([...commands]), port.exchange(commands)) };
  return { port: counted, exchanges };
}

describe('dashboard history', () => {
  let port: RedisPort;
  let admin: Redis;
  beforeAll(() => {
    port = connectIoredis(inject('redisUrl'));
    admin = adminClient();
  });
  afterAll(async () => {
    await port.close();
    admin.disconnect();
  });

  function deployment(options = withDashboard) {
    const prefix = uniquePrefix();
    const config = publishDeployment(prefix, options);
    return { config, stream: streamsOf(prefix).orders, keys: historyKeys(streamsOf(prefix).orders, 'fulfilment') };
  }
  const poll = (runtime: ReturnType<typeof createRuntime>) => runPollJob(runtime, 'fulfilment', { deadline: Date.now() + 4_000 });

  it('records one sample and one run per poll run, in one extra round trip after the run', async () => {
    const { config, stream, keys } = deployment();
    const lines: string[] = [];
    const meter = counting(port);
    const runtime = createRuntime(config, { port: meter.port, env, log: (line) => lines.push(line) });
    await poll(runtime); // creates the group; an idle run
    // Unsigned entries on an hmac stream: dead-lettered, a run that did something.
    await append(admin, stream, { event: 'order.placed', event_id: 'e1', payload: '{}' });
    await append(admin, stream, { event: 'order.placed', event_id: 'e2', payload: '{}' });
    const before = meter.exchanges.length;
    const result = await poll(runtime);
    expect(result.report.deadLettered).toBe(2);
    const recordExchanges = meter.exchanges.slice(before).filter((ex) => ex.some((c) => c.args[0] === opsRecordScript.sha1 || c.args[0] === opsRecordScript.text));
    expect(recordExchanges).toHaveLength(1);
    expect(meter.exchanges.at(-1)).toBe(recordExchanges[0]);

    const samples = (await admin.lrange(keys.samples, 0, -1)).map((text) => parseSample(text)!);
    // Both runs fell in one 20 s bucket (almost always); either way the latest sample is the second run's.
    expect(samples.length).toBeGreaterThanOrEqual(1);
    expect(samples[0]).toMatchObject({ pending: 0, ageMs: undefined, deadLetters: 2 });
    const runs = (await admin.lrange(keys.runs, 0, -1)).map((text) => JSON.parse(text));
    expect(runs).toEqual([expect.objectContaining({ job: 'poll', consumer: 'fulfilment', level: 'info', deadLettered: 2, acked: 0, handled: 2 })]);
    expect((await admin.lrange(keys.idleRuns, 0, -1)).map((text) => JSON.parse(text))).toEqual([expect.objectContaining({ handled: 0 })]);
    expect(lines).toEqual([]);
  });

  it('keeps one sample per bucket (acks summed), idle runs apart, and every list capped', async () => {
    const { config, keys } = deployment();
    const runtime = createRuntime(config, { port, env });
    // A bucket's sample already there: the next run adds its acks to it. Far enough from the
    // bucket's end that the run ends inside it (else wait for the next bucket).
    const redisNow = async () => {
      const [seconds, micros] = await admin.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    let now = await redisNow();
    if (SAMPLE_BUCKET_MS - (now % SAMPLE_BUCKET_MS) < 3_000) {
      await new Promise((r) => setTimeout(r, SAMPLE_BUCKET_MS - (now % SAMPLE_BUCKET_MS) + 50));
      now = await redisNow();
    }
    await admin.lpush(keys.samples, `${now} 5 1 0 7`);
    await poll(runtime);
    const [merged, ...rest] = await admin.lrange(keys.samples, 0, -1);
    expect(rest).toEqual([]);
    expect(parseSample(merged!)).toMatchObject({ acked: 7, ageMs: undefined, pending: 0 });
    expect(parseSample(merged!)!.t).toBeGreaterThanOrEqual(now);

    await admin.del(keys.samples);
    await admin.rpush(keys.samples, ...Array.from({ length: SAMPLES_KEPT + 5 }, (_, i) => `${now - 3_600_000 - i * 20_000} 0 0 0 0`));
    await admin.rpush(keys.idleRuns, ...Array.from({ length: IDLE_RUNS_KEPT + 5 }, () => '{"t":1,"job":"poll","level":"info"}'));
    await admin.rpush(keys.runs, ...Array.from({ length: ACTIVE_RUNS_KEPT }, () => '{"t":1,"job":"poll","level":"info","handled":1}'));
    // Idle, in a process that has recorded nothing yet (this one recorded an idle run just now).
    await poll(createRuntime(config, { port, env }));
    expect(await admin.llen(keys.samples)).toBe(SAMPLES_KEPT);
    expect(await admin.llen(keys.idleRuns)).toBe(IDLE_RUNS_KEPT);
    // The idle run did not touch the active runs.
    expect(await admin.llen(keys.runs)).toBe(ACTIVE_RUNS_KEPT);
    expect(JSON.parse((await admin.lindex(keys.runs, 0))!)).toMatchObject({ t: 1 });
  });

  it('a failed record costs one log line, never the run', async () => {
    const { config, keys } = deployment();
    const lines: string[] = [];
    const failing: RedisPort = {
      ...port,
      exchange: (commands) =>
        commands.some((c) => c.args[0] === opsRecordScript.sha1) ? Promise.reject(new Error('connection reset')) : port.exchange(commands),
    };
    const runtime = createRuntime(config, { port: failing, env, log: (line) => lines.push(line) });
    const result = await poll(runtime);
    expect(result.job).toBe('poll');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'dashboard history not recorded', consumer: 'fulfilment', error: { message: 'connection reset' } });
    expect(await admin.exists(keys.samples, keys.runs, keys.idleRuns)).toBe(0);
  });

  it('lists a run Redis refused as a failed run with the reply code, and still throws it', async () => {
    const { config, stream, keys } = deployment();
    const lines: string[] = [];
    const runtime = createRuntime(config, { port, env, log: (line) => lines.push(line) });
    await poll(runtime); // creates the group
    // The stream replaced by a key of another type behind the warm process: every claim now answers WRONGTYPE.
    await admin.del(stream);
    await admin.set(stream, 'not a stream');
    await expect(poll(runtime)).rejects.toThrow(/WRONGTYPE/);
    const runs = (await admin.lrange(keys.runs, 0, -1)).map((text) => JSON.parse(text));
    expect(runs[0]).toMatchObject({ job: 'poll', consumer: 'fulfilment', level: 'error', error: 'WRONGTYPE' });
    expect(lines).toEqual([]);
  });

  it('writes nothing for a deployment without the dashboard', async () => {
    const { config, keys } = deployment({} as typeof withDashboard);
    const meter = counting(port);
    await poll(createRuntime(config, { port: meter.port, env }));
    expect(await admin.exists(keys.samples, keys.runs, keys.idleRuns)).toBe(0);
    expect(meter.exchanges.flat().some((c) => c.name.startsWith('EVAL') && (c.args[0] === opsRecordScript.sha1 || c.args[0] === opsRecordScript.text))).toBe(false);
  });

  it('records trim runs in the deployment list, which the runs page filters by job', async () => {
    const stream = `${uniquePrefix()}:orders`;
    const config = defineConfig({
      name: `trim-${uniquePrefix()}`,
      redis: { tcp: {} },
      streams: { [stream]: { auth: { mode: 'exclusive-stream', producer: 'shop' } } },
      routes: { 'order.placed': stream },
      consumers: { fulfilment: { stream, group: 'fulfilment', wakeUp: true, settings: { runBudgetMs: 5_000, minIdleMs: 10_000 }, handler: entryConsumer(() => {}) } },
      publishApi: { producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed'] } }, ...withDashboard },
      trim: { schedule: '0 * * * *' },
    });
    const runtime = createRuntime(config, { port, env });
    await runPollJob(runtime, 'fulfilment', { deadline: Date.now() + 4_000 });
    await runTrimJob(runtime);
    expect(JSON.parse((await admin.lindex(jobRunsKey(config.name), 0))!)).toMatchObject({ job: 'trim', level: 'info', removed: 0 });
    const app = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log: createLogger(() => {}, Date.now, 'history-test') });
    const trims = (await (await app.request('/runs.json?job=trim', { headers: bearer })).json()) as { active: unknown[]; idle: Array<{ job: string }> };
    expect(trims.active).toEqual([]);
    expect(trims.idle.map((r) => r.job)).toEqual(['trim']);
    const polls = (await (await app.request('/runs.json?job=poll', { headers: bearer })).json()) as { idle: Array<{ job: string }> };
    expect(polls.idle.map((r) => r.job)).toEqual(['poll']);
    // A trim that removed something did something (it keeps the group's last-read entry).
    for (const id of ['x1', 'x2']) await admin.xadd(stream, '*', 'event', 'order.placed', 'event_id', id, 'payload', '{}');
    await runPollJob(runtime, 'fulfilment', { deadline: Date.now() + 4_000 });
    await runTrimJob(runtime);
    const after = (await (await app.request('/runs.json?job=trim', { headers: bearer })).json()) as { active: Array<{ removed: number }> };
    expect(after.active).toEqual([expect.objectContaining({ removed: 1 })]);
  });

  it('the overview and runs pages read it back: a chart point per sample, active runs first, filters', async () => {
    const { config, stream } = deployment();
    const runtime = createRuntime(config, { port, env });
    await poll(runtime);
    await append(admin, stream, { event: 'order.placed', event_id: 'e1', payload: '{}' });
    await poll(runtime);
    const app = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log: createLogger(() => {}, Date.now, 'history-test') });

    const overview = (await (await app.request('/overview.json', { headers: bearer })).json()) as {
      consumers: Array<{ backlog: { consumer: string; deadLetters: number }; lastRunAgoMs?: number; samples: unknown[] }>;
      recentRuns: Array<{ deadLettered: number }>;
    };
    expect(overview.consumers).toHaveLength(1);
    expect(overview.consumers[0]!.backlog).toMatchObject({ consumer: 'fulfilment', deadLetters: 1 });
    // When its poller last recorded a run: it is alive.
    expect(overview.consumers[0]!.lastRunAgoMs).toBeGreaterThanOrEqual(0);
    expect(overview.consumers[0]!.samples.length).toBeGreaterThanOrEqual(1);
    expect(overview.recentRuns).toEqual([expect.objectContaining({ deadLettered: 1 })]);

    const page = await (await app.request('/', { headers: bearer })).text();
    expect(page).toContain('idle runs at most every 5.0 min per process');
    const points = page.match(/<circle class="point"/g) ?? [];
    expect(points.length).toBe(overview.consumers[0]!.samples.length);

    const runs = (await (await app.request('/runs.json', { headers: bearer })).json()) as { active: unknown[]; idle: unknown[] };
    expect(runs.active).toHaveLength(1);
    expect(runs.idle).toHaveLength(1);
    const warnings = (await (await app.request('/runs.json?level=warn', { headers: bearer })).json()) as { active: unknown[]; idle: unknown[] };
    expect(warnings).toEqual({ active: [], idle: [] });
    const trims = (await (await app.request('/runs.json?job=trim', { headers: bearer })).json()) as { active: unknown[]; idle: unknown[] };
    expect(trims).toEqual({ active: [], idle: [] });
    const runsPage = await (await app.request('/runs?consumer=fulfilment', { headers: bearer })).text();
    expect(runsPage.indexOf('Runs that did something')).toBeLessThan(runsPage.indexOf('Idle runs'));
  });

  it('a record or sample with a time no Date can hold shows "?" instead of failing the page', async () => {
    const { config, stream } = deployment();
    const runtime = createRuntime(config, { port, env });
    await poll(runtime);
    const keys = historyKeys(stream, 'fulfilment');
    // toISOString throws a RangeError beyond ±8.64e15 ms; a hand-edited or corrupted list holds anything.
    await admin.lpush(keys.runs, JSON.stringify({ t: 1e17, job: 'poll', consumer: 'fulfilment', level: 'info', handled: 1 }));
    await admin.lpush(keys.samples, `${1e17} 5 0 0 0`);
    const app = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log: createLogger(() => {}, Date.now, 'history-test') });

    const runsPage = await app.request('/runs', { headers: bearer });
    expect(runsPage.status).toBe(200);
    expect(await runsPage.text()).toContain('<td>?</td>');
    const overview = await app.request('/', { headers: bearer });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toMatch(/<title>\?: /);
  });
});

describe('dashboard history on Redis Cluster', () => {
  let cluster: ClusterHandles;
  useClusterPerSuite((handles) => (cluster = handles));

  it("records and reads back in the stream's slot (no CROSSSLOT)", async () => {
    const tag = uniquePrefix();
    const stream = `orders:{${tag}}`;
    const config = defineConfig({
      name: 'shop',
      redis: { tcp: { cluster: true } },
      streams: { [stream]: { keyTag: tag, auth: { mode: 'exclusive-stream', producer: 'shop' } } },
      routes: { 'order.placed': stream },
      consumers: { fulfilment: { stream, group: 'fulfilment', wakeUp: true, settings: { runBudgetMs: 5_000, minIdleMs: 10_000 }, handler: entryConsumer(() => {}) } },
      publishApi: { producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed'] } }, ...withDashboard },
    });
    const lines: string[] = [];
    const runtime = createRuntime(config, { port: cluster.port, env, log: (line) => lines.push(line) });
    await cluster.admin.xadd(stream, '*', 'event', 'order.placed', 'event_id', 'c1', 'payload', '{}');
    await runPollJob(runtime, 'fulfilment', { deadline: Date.now() + 4_000 });
    expect(lines).toEqual([]);
    const keys = historyKeys(stream, 'fulfilment');
    expect(await cluster.admin.llen(keys.samples)).toBe(1);
    expect(JSON.parse((await cluster.admin.lindex(keys.runs, 0))!)).toMatchObject({ acked: 1 });

    const app = createDashboardApp({ runtime, env: { OPS_ADMIN_TOKEN: ADMIN_TOKEN }, adminTokenEnv: 'OPS_ADMIN_TOKEN', log: createLogger(() => {}, Date.now, 'history-test') });
    const runs = (await (await app.request('/runs.json', { headers: bearer })).json()) as { active: unknown[] };
    expect(runs.active).toHaveLength(1);
  });
});
