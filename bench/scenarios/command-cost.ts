/**
 * What a deployment costs on serverless Redis, which bills per top-level command (SPEC §10):
 * the commands of an idle poll run, of an idle trim per stream, and per 1,000 entries of a
 * busy drain — over TCP (ioredis) and REST (the REST client through the REST emulator), each
 * counted on the wire by bench/command-meter.ts (a script call once, whatever it runs).
 * Counts, not timings: the figures are the same on a loaded machine, so one pass is enough.
 *
 * Idle runs are measured as a scheduled function runs them: a deployment with the dashboard
 * on, a warm runtime (groups made, scripts loaded, an idle run already recorded within the
 * interval). The busy drain is the product's run loop at the consumer config's default batch
 * (100), signatures verified, on entries appended as the product's writers append them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRestServer } from '../../local/rest-emulator';
import { createPoller } from '../../src/consume/poller';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { runPollJob, runTrimJob } from '../../src/deployment/jobs';
import { createRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { connectUpstash } from '../../src/redis/upstash-port';
import { startCommandMeter, type CommandMeter } from '../command-meter';
import { prefillStream } from '../fixtures';
import { benchProcessor } from './processor';

export interface CommandCost {
  readonly idlePollRun: number;
  readonly idleTrimPerStream: number;
  /** Busy: a drain of `busyEntries` entries at batch 100, commands per 1,000 of them. */
  readonly per1kEntries: number;
  /** The commands of the idle poll run and of the idle trim, for the report. */
  readonly idlePollCommands: readonly string[];
  readonly idleTrimCommands: readonly string[];
}

export interface CommandCosts {
  readonly tcp: CommandCost;
  readonly rest: CommandCost;
  readonly busyEntries: number;
}

const TRIM_STREAMS = 2;
const BUSY_BATCH = 100;

async function costOver(transport: 'tcp' | 'rest', meter: CommandMeter, connect: () => RedisPort, admin: Redis, busyEntries: number): Promise<CommandCost> {
  const prefix = `bench:cost:${transport}:${randomBytes(3).toString('hex')}`;
  const streams = Array.from({ length: TRIM_STREAMS }, (_, i) => `${prefix}:s${i}`);
  const config = defineConfig({
    name: `bench-cost-${transport}`,
    redis: { tcp: {}, rest: {} },
    streams: Object.fromEntries(streams.map((stream) => [stream, { auth: { mode: 'exclusive-stream', producer: 'bench' } }])),
    routes: Object.fromEntries(streams.map((stream, i) => [`event.${i}`, stream])),
    consumers: Object.fromEntries(
      streams.map((stream, i) => [`c${i}`, { stream, group: 'g', schedule: '* * * * *', settings: { runBudgetMs: 5_000, minIdleMs: 60_000 }, handler: entryConsumer(() => {}) }]),
    ),
    publishApi: { producers: { bench: { tokenEnv: 'BENCH_TOKEN', eventTypes: streams.map((_, i) => `event.${i}`) } }, dashboard: { adminTokenEnv: 'OPS_TOKEN' } },
    trim: { schedule: '0 * * * *' },
  });
  const port = connect();
  try {
    const runtime = createRuntime(config, { port, env: { BENCH_TOKEN: 'x', OPS_TOKEN: 'y' } });
    const poll = () => runPollJob(runtime, 'c0', { deadline: Date.now() + 4_000 });
    // Warm: groups created on NOGROUP, scripts loaded, an idle run and a trim recorded.
    for (const consumer of config.consumers.keys()) await runPollJob(runtime, consumer, { deadline: Date.now() + 4_000 });
    await runTrimJob(runtime);

    meter.reset();
    await poll();
    const idlePollCommands = meter.commands();
    meter.reset();
    await runTrimJob(runtime);
    const idleTrimCommands = meter.commands();

    const busy = `${prefix}:busy`;
    await prefillStream(admin, busy, busyEntries, 300);
    await admin.xgroup('CREATE', busy, 'g', '0-0');
    const poller = createPoller({
      port,
      config: { stream: busy, group: 'g', consumer: 'bench-cost', batch: BUSY_BATCH, handlerTimeoutMs: 5_000, runBudgetMs: 600_000, minIdleMs: 1_200_000 },
      process: benchProcessor(busy),
    });
    meter.reset();
    const report = await poller.run({ mode: 'drain' });
    const busyCommands = meter.commands().length;
    if (report.acked !== busyEntries) throw new Error(`command cost over ${transport}: acked ${report.acked} of ${busyEntries}`);
    await admin.del(busy, ...streams);
    return {
      idlePollRun: idlePollCommands.length,
      idleTrimPerStream: idleTrimCommands.length / TRIM_STREAMS,
      per1kEntries: Math.round((busyCommands / busyEntries) * 1000 * 10) / 10,
      idlePollCommands,
      idleTrimCommands,
    };
  } finally {
    await port.close();
  }
}

/** Measures both transports against the server at `redisUrl` (a private one: keys are removed after). */
export async function measureCommandCosts(redisUrl: string, busyEntries: number): Promise<CommandCosts> {
  const target = new URL(redisUrl);
  const meter = await startCommandMeter({ host: target.hostname, port: Number(target.port) });
  const token = randomBytes(12).toString('hex');
  const rest = await startRestServer({ redisUrl: meter.url, token });
  const admin = new Redis(redisUrl);
  try {
    const tcp = await costOver('tcp', meter, () => connectIoredis(meter.url), admin, busyEntries);
    const restCost = await costOver('rest', meter, () => connectUpstash({ url: rest.url, token }), admin, busyEntries);
    return { tcp, rest: restCost, busyEntries };
  } finally {
    admin.disconnect();
    await rest.close();
    await meter.close();
  }
}
