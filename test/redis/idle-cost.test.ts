/**
 * SPEC §10 "Cost of an idle run" (issue 25 item 6): serverless Redis bills per top-level
 * command, so an idle poll run sends one (its claim script) and an idle trim one per stream.
 * Counted on the wire (bench/command-meter.ts: every command the client writes, a script
 * once, refused ones too — not `INFO commandstats`, which also counts what scripts run),
 * over ioredis and over the REST client (through a REST emulator of its own, in front of the
 * same meter), on a deployment with the dashboard on, as a scheduled function runs it: one
 * runtime per process (a warm container), its port open across runs.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startCommandMeter, type CommandMeter } from '../../bench/command-meter';
import { startRestServer, type RestServer } from '../../local/rest-emulator';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';
import { runPollJob, runTrimJob } from '../../src/deployment/jobs';
import { historyKeys } from '../../src/deployment/run-history';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import * as scripts from '../../src/generated/lua-scripts';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { connectUpstash } from '../../src/redis/upstash-port';
import { adminClient, append, uniquePrefix } from '../support/redis';

const SCRIPT_NAMES = new Map(Object.values(scripts).map((script) => [script.sha1, script.name]));
/** Commands as a reader wants them in a failure message: scripts by name. */
const named = (commands: readonly string[]) => commands.map((c) => c.replace(/^EVALSHA (\w+)$/, (_, sha: string) => `EVALSHA ${SCRIPT_NAMES.get(sha) ?? sha}`));

const IDLE_RECORD_SECONDS = 300;

function deployment(prefix: string, withDashboard = true): { config: DeploymentConfig; streams: string[] } {
  const streams = [`${prefix}:orders`, `${prefix}:payments`];
  const config = defineConfig({
    name: `idle-${prefix}`,
    redis: { tcp: {}, rest: {} },
    streams: Object.fromEntries(streams.map((stream) => [stream, { auth: { mode: 'exclusive-stream', producer: 'shop' } }])),
    routes: { 'order.placed': streams[0]!, 'payment.charged': streams[1]! },
    consumers: Object.fromEntries(
      streams.map((stream, i) => [
        `c${i}`,
        { stream, group: 'g', schedule: '* * * * *', settings: { runBudgetMs: 5_000, minIdleMs: 10_000 }, handler: entryConsumer(() => {}) },
      ]),
    ),
    publishApi: {
      producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed', 'payment.charged'] } },
      ...(withDashboard ? { dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN', idleRecordSeconds: IDLE_RECORD_SECONDS } } : {}),
    },
    trim: { schedule: '0 * * * *' },
  });
  return { config, streams };
}

describe('the cost of idle runs, in top-level commands', () => {
  let meter: CommandMeter;
  let rest: RestServer;
  let admin: Redis;
  const token = randomBytes(12).toString('hex');

  beforeAll(async () => {
    const target = new URL(inject('redisUrl'));
    meter = await startCommandMeter({ host: target.hostname, port: Number(target.port) });
    rest = await startRestServer({ redisUrl: meter.url, token });
    admin = adminClient();
  });
  afterAll(async () => {
    admin?.disconnect();
    await rest?.close();
    await meter?.close();
  });

  const clients: Array<[string, () => RedisPort]> = [
    ['ioredis', () => connectIoredis(meter.url)],
    ['upstash', () => connectUpstash({ url: rest.url, token })],
  ];

  /** What `work` sent, counted from a clean start. */
  async function sent(work: () => Promise<unknown>): Promise<string[]> {
    meter.reset();
    await work();
    return named(meter.commands());
  }

  describe.each(clients)('over %s', (_, connect) => {
    let port: RedisPort;
    beforeAll(() => {
      port = connect();
    });
    afterAll(async () => {
      await port?.close();
    });

    /** A warm container: the groups made and the scripts loaded by a first round of runs. */
    async function warmRuntime(withDashboard = true, clock = () => Date.now()) {
      const { config, streams } = deployment(uniquePrefix(), withDashboard);
      const runtime = createRuntime(config, { port, env: { SHOP_TOKEN: 'x', OPS_ADMIN_TOKEN: 'y' }, now: clock });
      for (const consumer of ['c0', 'c1']) await poll(runtime, consumer);
      await runTrimJob(runtime);
      return { runtime, streams };
    }
    const poll = (runtime: DeploymentRuntime, consumer = 'c0') => runPollJob(runtime, consumer, { deadline: runtime.now() + 4_000 });

    it('an idle poll run sends one command: the claim script', async () => {
      const { runtime } = await warmRuntime();
      const commands = await sent(() => poll(runtime));
      expect(commands).toEqual([`EVALSHA claim`]);
    });

    it('an idle trim sends one command per stream', async () => {
      const { runtime, streams } = await warmRuntime();
      const commands = await sent(() => runTrimJob(runtime));
      expect(commands).toEqual(streams.map(() => 'EVALSHA retention'));
    });

    it('a poll run that did something is recorded at once; an idle one once per interval, which tells the dashboard the poller is alive', async () => {
      let shift = 0;
      const { runtime, streams } = await warmRuntime(true, () => Date.now() + shift);
      const keys = historyKeys(streams[0]!, 'g');
      await append(admin, streams[0]!, { event: 'order.placed', event_id: 'e1', payload: '{}' });
      // A run that handled an entry: its claims and settle, then its record.
      expect((await sent(() => poll(runtime))).at(-1)).toBe('EVALSHA ops-record');
      expect(await sent(() => poll(runtime))).toEqual(['EVALSHA claim']);
      const idleBefore = await admin.llen(keys.idleRuns);
      shift = IDLE_RECORD_SECONDS * 1000;
      expect(await sent(() => poll(runtime))).toEqual(['EVALSHA claim', 'EVALSHA ops-record']);
      expect(await admin.llen(keys.idleRuns)).toBe(idleBefore + 1);
      expect(await sent(() => poll(runtime))).toEqual(['EVALSHA claim']);
    });

    it('an idle trim is recorded once per interval too', async () => {
      let shift = 0;
      const { runtime, streams } = await warmRuntime(true, () => Date.now() + shift);
      shift = IDLE_RECORD_SECONDS * 1000;
      expect(await sent(() => runTrimJob(runtime))).toEqual([...streams.map(() => 'EVALSHA retention'), 'EVALSHA ops-record']);
      expect(await sent(() => runTrimJob(runtime))).toEqual(streams.map(() => 'EVALSHA retention'));
    });
  });

  it('a connection costs nothing of its own: no ready-check INFO, no CLIENT SETINFO, no QUIT', async () => {
    const { config } = deployment(uniquePrefix(), false);
    const warm = createRuntime(config, { port: connectIoredis(meter.url), env: { SHOP_TOKEN: 'x' } });
    await runPollJob(warm, 'c0', { deadline: Date.now() + 4_000 });
    await warm.port.close();
    const commands = await sent(async () => {
      // A new process: it connects, runs once and closes.
      const cold = createRuntime(config, { port: connectIoredis(meter.url), env: { SHOP_TOKEN: 'x' } });
      await runPollJob(cold, 'c0', { deadline: Date.now() + 4_000 });
      await cold.port.close();
    });
    expect(commands).toEqual(['EVALSHA claim']);
  });
});
