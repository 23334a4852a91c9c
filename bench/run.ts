/**
 * `npm run bench [-- --quick]`: one run, its own redis-server and 3-master Cluster, every
 * scenario in its own child process on the same prefilled streams. Prints a table and
 * writes bench/results/latest.json with the target ratios under `ratios`, beside the raw
 * loop's absolute figure and the load average that tell whether the run was quiet, and
 * under `profile` where each stream scenario's CPU per entry goes (Node user/system, Redis
 * per command), taken around the timed part only. The command cost (commands per idle poll
 * run, per idle trim and stream, per 1,000 busy entries; TCP and REST) is counted once, in
 * this process: counts do not vary with load. `npm run bench -- --commands` runs only that.
 * `npm run bench -- --backoff [--quick]` runs only the retry-backoff figures (issue 26): the
 * product at batch 100 with its default exponential backoff, with `fixed` backoff (the reclaim
 * rule from before backoff), and draining a crashed consumer's backlog (every entry reclaimed).
 * `npm run bench -- --flow [--quick]` runs only the flow-control figures (issue 27): the product
 * with flow leases over 1,000 keys (order none, and strict) against the product without, and
 * 4 processes on 10 hot keys with and without leases (what a busy key costs).
 * `npm run bench -- --scale [--quick] [--against REV]` runs only the scale-out figures (issue
 * 24; bench/scale-alone.ts), optionally beside another revision's children.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, startRedisServer } from '../local/redis-server';
import { measureColdImport, type ColdImport } from './cold-import';
import { jsonPayload, prefillStream, resetGroup } from './fixtures';
import { FULL, LATENCY_WARMUP_MESSAGES, QUICK, SCALE_BATCH, SCALE_PROCESSES, SIZES, WARM_STREAM_ENTRIES, WARMUP, warmupEntries, type Size } from './plan';
import { openRedisMeter, withRedisFigures } from './redis-meter';
import { measureCommandCosts, type CommandCosts } from './scenarios/command-cost';
import { commandCostRatios, printBackoffFigures, printCommandCosts, printFlowFigures, report, type RunContext } from './report';
import { prepareScaleCases, scaleAlone } from './scale-alone';
import type { ScenarioResult, StreamParams } from './scenarios/types';
import { bundleChild, runChild, runSideBySide } from './spawn';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
/** `--report bench/results/runs.json`: print and write the report of a finished run again. */
const reportFrom = process.argv.includes('--report') ? process.argv[process.argv.indexOf('--report') + 1] : undefined;
const commandsOnly = process.argv.includes('--commands');
const backoffOnly = process.argv.includes('--backoff');
const flowOnly = process.argv.includes('--flow');
const scaleOnly = process.argv.includes('--scale');
/** `--scale --against REV`: the same cases with the children of another revision, alternating. */
const againstRevision = () => (process.argv.includes('--against') ? process.argv[process.argv.indexOf('--against') + 1] : undefined);
const RUNS_FILE = join(here, 'results', 'runs.json');
const LATEST_FILE = join(here, 'results', 'latest.json');
const COMMANDS_FILE = join(here, 'results', 'commands.json');
const plan = quick ? QUICK : FULL;
const GROUP = 'bench';

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const eps = (r: ScenarioResult) => r.entries / r.seconds;

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const loadPerRepetition: number[][] = [];
  const bundle = await bundleChild(here);
  const server = await startRedisServer();
  const redisCluster = await startRedisCluster(3);
  const figures = new Map<string, ScenarioResult[]>();
  const record = (name: string, result: ScenarioResult) => figures.set(name, [...(figures.get(name) ?? []), result]);
  let latency: ScenarioResult | undefined;
  let commandCosts: CommandCosts | undefined;
  const meters: Array<{ close(): void }> = [];
  try {
    const admin = new Redis(server.url);
    const clusterAdmin = new Cluster([...redisCluster.nodes]);
    const base = { redisUrl: server.url, group: GROUP };
    // Redis's side of every stream scenario: the one server, or all three Cluster masters.
    const serverMeter = openRedisMeter([{ host: server.host, port: server.port }]);
    const clusterMeter = openRedisMeter(redisCluster.nodes);
    meters.push(serverMeter, clusterMeter);

    progress('prefilling signed entries');
    const streams = { '300B': 'bench:300B', '64KiB': 'bench:64KiB', perMessage: 'bench:per-message', rest: 'bench:rest' };
    await prefillStream(admin, streams['300B'], plan.small, SIZES['300B']);
    await prefillStream(admin, streams['64KiB'], plan.large, SIZES['64KiB']);
    await prefillStream(admin, streams.perMessage, plan.perMessage, SIZES['300B']);
    await prefillStream(admin, streams.rest, plan.rest, SIZES['300B']);
    // A warm-up drains its stream (the product checks it acked every entry), so each warm-up
    // length has a stream of exactly that many entries, prefilled on first use.
    const warmStreamsFilled = new Map<string, Promise<void>>();
    const warmStream = async (size: Size, count: number): Promise<string> => {
      const stream = size === '300B' && count === WARM_STREAM_ENTRIES ? 'bench:warm:300B' : `bench:warm:${size}:${count}`;
      if (!warmStreamsFilled.has(stream)) warmStreamsFilled.set(stream, prefillStream(admin, stream, count, SIZES[size]));
      await warmStreamsFilled.get(stream);
      return stream;
    };
    await warmStream('300B', WARM_STREAM_ENTRIES);

    // Every child warms up on its own group of a warm-up stream, so processes side by side
    // each get the whole warm-up workload.
    let warmGroups = 0;
    const warmup = async (redis: Redis | Cluster, stream: string, count: number, params: Omit<StreamParams, 'stream' | 'group' | 'count'>) => {
      const group = `warm-${(warmGroups += 1)}`;
      await redis.xgroup('CREATE', stream, group, '0-0');
      return { ...params, stream, group, count, shared: false };
    };
    // TCP consumers of small entries warm up for WARMUP_ROUNDS rounds (plan.ts); a REST run's
    // rounds are round trips to the REST server, and 64 KiB entries are few per run.
    const warmupCount = (scenario: string, size: Size, batch: number) => (size === '300B' && scenario !== 'rest' ? warmupEntries(batch) : WARMUP[size]);

    const streamCase = async (name: string, scenario: string, stream: string, size: Size, count: number, batch: number, options: CaseOptions = {}) => {
      await resetGroup(admin, stream, GROUP);
      if (options.crashedBacklog) await crashedBacklog(admin, stream, count);
      const params = { ...base, stream, count, batch, backoff: options.backoff };
      const warmCount = warmupCount(scenario, size, batch);
      const job = { scenario, params, warmup: await warmup(admin, await warmStream(size, warmCount), warmCount, { ...base, batch }) };
      const result = await withRedisFigures(serverMeter, (atStart) => runChild(bundle.file, job, atStart));
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} entries/s`);
    };

    const scale = await prepareScaleCases({
      plan,
      admin,
      clusterAdmin,
      serverUrl: server.url,
      clusterNodes: redisCluster.nodes,
      serverMeter,
      clusterMeter,
      record,
      warmupOf: (redis, stream, params) => warmup(redis, stream, warmupEntries(SCALE_BATCH), params as Omit<StreamParams, 'stream' | 'group' | 'count'>),
    });

    const fillQueue = async (queueName: string, size: Size, count: number) => {
      const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: server.port } });
      const data = { payload: jsonPayload(SIZES[size]) };
      for (let start = 0; start < count; start += 500) {
        const n = Math.min(500, count - start);
        await queue.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'job', data, opts: { removeOnComplete: true, jobId: `j${start + i}` } })));
      }
      return queue;
    };

    const bullCase = async (concurrency: number, size: Size, count: number) => {
      const name = `bullmq_c${concurrency}_${size}`;
      const queueName = `bench-${concurrency}-${size}`;
      const queues = [await fillQueue(queueName, size, count), await fillQueue(`${queueName}-warmup`, size, WARMUP[size])];
      const params = { redisUrl: server.url, queue: queueName, count, concurrency };
      const result = await runChild(bundle.file, { scenario: 'bullmq', params, warmup: { ...params, queue: `${queueName}-warmup`, count: WARMUP[size] } });
      for (const queue of queues) {
        await queue.obliterate({ force: true });
        await queue.close();
      }
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} jobs/s`);
    };

    const httpCase = async (name: string, requests: number, perRequest: number) => {
      const stream = `bench:${name}`;
      await admin.del(stream);
      const result = await runChild(bundle.file, { scenario: 'http', params: { redisUrl: server.url, stream, requests, perRequest, inFlight: 16 } });
      await admin.del(stream);
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} events/s (${Math.round(result.extra!.requestsPerSec!)} requests/s)`);
    };

    for (let rep = 0; rep < plan.reps; rep += 1) {
      loadPerRepetition.push(loadavg());
      progress(`repetition ${rep + 1}/${plan.reps} (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
      // Each ratio's two sides run back to back, so a load change hits both alike.
      for (const batch of [100, 500]) {
        await streamCase(`product_b${batch}_300B`, 'product', streams['300B'], '300B', plan.small, batch);
        await streamCase(`raw_verify_b${batch}_300B`, 'raw-verify', streams['300B'], '300B', plan.small, batch);
        await streamCase(`raw_b${batch}_300B`, 'raw', streams['300B'], '300B', plan.small, batch);
      }
      await backoffCases((name, options) => streamCase(name, 'product', streams['300B'], '300B', plan.small, 100, options));
      await streamCase('product_b10_300B', 'product', streams['300B'], '300B', plan.small, 10);
      await streamCase('per_message_b100_300B', 'per-message', streams.perMessage, '300B', plan.perMessage, 100);
      await bullCase(50, '300B', plan.bull);
      await streamCase('product_b500_64KiB', 'product', streams['64KiB'], '64KiB', plan.large, 500);
      await streamCase('raw_b500_64KiB', 'raw', streams['64KiB'], '64KiB', plan.large, 500);
      await bullCase(50, '64KiB', plan.large);
      await streamCase('product_rest_b100_300B', 'rest', streams.rest, '300B', plan.rest, 100);
      await httpCase('http_publish_single', plan.httpSingle, 1);
      await httpCase('http_publish_batch100', plan.httpBatches, 100);
      for (const processes of SCALE_PROCESSES) {
        await scale.onOneStream(`scale_${processes}`, bundle.file, 'product', processes);
        await scale.onOneStream(`scale_raw_verify_${processes}`, bundle.file, 'raw-verify', processes);
      }
      await scale.onCluster('scale_cluster3', bundle.file, 'product');
      await scale.onCluster('scale_raw_verify_cluster3', bundle.file, 'raw-verify');
    }
    progress(`latency: continuous mode at ${plan.latencyRate} msg/s, ${plan.latencyMessages} samples`);
    latency = await runChild(bundle.file, {
      scenario: 'latency',
      params: {
        redisUrl: server.url,
        stream: 'bench:latency',
        ratePerSecond: plan.latencyRate,
        messages: plan.latencyMessages,
        warmupMessages: LATENCY_WARMUP_MESSAGES,
      },
    });
    progress('command cost: idle poll run, idle trim, busy drain (TCP and REST)');
    commandCosts = await measureCommandCosts(server.url, plan.commandCostEntries);
    admin.disconnect();
    clusterAdmin.disconnect();
  } finally {
    for (const meter of meters) meter.close();
    await server.stop();
    await redisCluster.stop();
    bundle.cleanup();
  }
  progress('cold import of the built poll bundle');
  const coldImport: ColdImport = await measureColdImport(join(here, '..'), here);
  const context: RunContext = { quick, plan, loadAtStart, loadAtEnd: loadavg(), loadPerRepetition, coldImport, commandCosts };
  // Every measurement is kept before the report is made from it.
  mkdirSync(dirname(RUNS_FILE), { recursive: true });
  writeFileSync(RUNS_FILE, JSON.stringify({ figures: [...figures], latency, context }));
  report(figures, latency!, context, LATEST_FILE);
}

function reportAgain(file: string): void {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { figures: Array<[string, ScenarioResult[]]>; latency: ScenarioResult; context: RunContext };
  report(new Map(saved.figures), saved.latency, saved.context, LATEST_FILE);
}

/** `--commands`: the command cost alone, on a private redis-server; printed, and written to bench/results/commands.json. */
async function commandsAlone(): Promise<void> {
  const server = await startRedisServer();
  try {
    const costs = await measureCommandCosts(server.url, plan.commandCostEntries);
    printCommandCosts(costs);
    mkdirSync(dirname(COMMANDS_FILE), { recursive: true });
    writeFileSync(COMMANDS_FILE, JSON.stringify({ at: new Date().toISOString(), ...commandCostRatios(costs), costs }, null, 2));
    console.log(`\nwrote ${COMMANDS_FILE}`);
  } finally {
    await server.stop();
  }
}

interface CaseOptions {
  readonly backoff?: 'fixed' | 'exponential';
  /** Every entry pending under a consumer that is gone, idle past minIdle: the run reclaims them all. */
  readonly crashedBacklog?: boolean;
}

/** The product config's minIdleMs (bench/scenarios/product.ts), and an idle past it. */
const PRODUCT_MIN_IDLE_MS = 1_200_000;

async function crashedBacklog(admin: Redis, stream: string, count: number): Promise<void> {
  await admin.xreadgroup('GROUP', GROUP, 'crashed', 'COUNT', count, 'STREAMS', stream, '>');
  const ids = (await admin.xrange(stream, '-', '+')).map(([id]) => id);
  for (let i = 0; i < ids.length; i += 1_000) await admin.xclaim(stream, GROUP, 'crashed', 0, ...ids.slice(i, i + 1_000), 'IDLE', PRODUCT_MIN_IDLE_MS + 60_000, 'JUSTID');
}

/**
 * Issue 26's figures, beside product_b100_300B (default exponential backoff, nothing retained):
 * the same with `fixed` backoff, and a drain that reclaims a crashed consumer's whole backlog
 * (the reclaim path: XPENDING pages judged in claim.lua, XCLAIM per entry).
 */
async function backoffCases(run: (name: string, options: CaseOptions) => Promise<void>): Promise<void> {
  await run('product_fixed_b100_300B', { backoff: 'fixed' });
  await run('product_reclaim_b100_300B', { crashedBacklog: true });
}

/** `--backoff`: the product at batch 100 with and without backoff, and reclaiming, on a private redis-server; printed. */
async function backoffAlone(): Promise<void> {
  const bundle = await bundleChild(here);
  const server = await startRedisServer();
  const meter = openRedisMeter([{ host: server.host, port: server.port }]);
  const admin = new Redis(server.url);
  const figures = new Map<string, ScenarioResult[]>();
  try {
    progress('prefilling signed entries');
    await prefillStream(admin, 'bench:300B', plan.small, SIZES['300B']);
    await prefillStream(admin, 'bench:warm:300B', WARM_STREAM_ENTRIES, SIZES['300B']);
    let warmGroups = 0;
    const run = async (name: string, options: CaseOptions) => {
      await resetGroup(admin, 'bench:300B', GROUP);
      if (options.crashedBacklog) await crashedBacklog(admin, 'bench:300B', plan.small);
      const group = `warm-${(warmGroups += 1)}`;
      await admin.xgroup('CREATE', 'bench:warm:300B', group, '0-0');
      const params = { redisUrl: server.url, group: GROUP, stream: 'bench:300B', count: plan.small, batch: 100, backoff: options.backoff };
      const warmup = { ...params, stream: 'bench:warm:300B', group, count: warmupEntries(params.batch), shared: false };
      const result = await withRedisFigures(meter, (atStart) => runChild(bundle.file, { scenario: 'product', params, warmup }, atStart));
      figures.set(name, [...(figures.get(name) ?? []), result]);
      progress(`${name}: ${Math.round(eps(result))} entries/s, Redis ${result.redis?.cpuMicrosPerEntry.toFixed(2)} µs/entry`);
    };
    for (let rep = 0; rep < plan.reps; rep += 1) {
      await run('product_b100_300B', {});
      await backoffCases(run);
    }
  } finally {
    admin.disconnect();
    meter.close();
    await server.stop();
    bundle.cleanup();
  }
  printBackoffFigures(figures);
}

/**
 * `--flow`: the product with flow control beside the product without, alternating, on a
 * private redis-server; printed. One run over 1,000 keys never contends with itself: it
 * measures what leases cost (the admission, the lease hash), against both the product's plain
 * stream and the same keyed stream read without leases. Four processes on 10
 * keys contend: parked entries per handled one is what a busy key costs.
 */
async function flowAlone(): Promise<void> {
  const bundle = await bundleChild(here);
  const server = await startRedisServer();
  const meter = openRedisMeter([{ host: server.host, port: server.port }]);
  const admin = new Redis(server.url);
  const figures = new Map<string, ScenarioResult[]>();
  const record = (name: string, result: ScenarioResult) => figures.set(name, [...(figures.get(name) ?? []), result]);
  let warmGroups = 0;
  const warmupOf = async (params: StreamParams) => {
    const group = `warm-${(warmGroups += 1)}`;
    await admin.xgroup('CREATE', 'bench:warm:flow', group, '0-0');
    return { ...params, stream: 'bench:warm:flow', group, count: warmupEntries(params.batch), shared: false };
  };
  try {
    progress('prefilling signed entries: no flow key, 1,000 flow keys, 10 flow keys');
    await prefillStream(admin, 'bench:300B', plan.flow, SIZES['300B']);
    await prefillStream(admin, 'bench:flow:300B', plan.flow, SIZES['300B'], 1_000);
    await prefillStream(admin, 'bench:hot:300B', plan.hot, SIZES['300B'], 10);
    await prefillStream(admin, 'bench:warm:flow', WARM_STREAM_ENTRIES, SIZES['300B'], 1_000);
    const single = async (name: string, stream: string, flow?: StreamParams['flow'], rateLimit?: StreamParams['rateLimit']) => {
      await resetGroup(admin, stream, GROUP);
      const params: StreamParams = { redisUrl: server.url, group: GROUP, stream, count: plan.flow, batch: 100, flow, rateLimit };
      const result = await withRedisFigures(meter, async (atStart) => runChild(bundle.file, { scenario: 'product', params, warmup: await warmupOf(params) }, atStart));
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} entries/s, Redis ${result.redis?.cpuMicrosPerEntry.toFixed(2)} µs/entry`);
    };
    const busy = async (name: string, flow?: StreamParams['flow']) => {
      await resetGroup(admin, 'bench:hot:300B', GROUP);
      const jobs: object[] = [];
      for (let i = 0; i < 4; i += 1) {
        const params: StreamParams = { redisUrl: server.url, group: GROUP, stream: 'bench:hot:300B', count: plan.hot, batch: SCALE_BATCH, consumer: `hot-${i}`, shared: true, flow };
        jobs.push({ scenario: 'product', params, warmup: await warmupOf(params) });
      }
      let results: ScenarioResult[] = [];
      const aggregate = await withRedisFigures(meter, async (atStart) => {
        const ran = await runSideBySide(bundle.file, jobs, atStart);
        results = ran.results;
        return ran.aggregate;
      });
      // With leases, a drain run that ends may leave a busy key's last parked entries to the next
      // run (they wait for their key's lease to end): counted, not an error.
      if (aggregate.entries !== plan.hot && flow === undefined) throw new Error(`${name}: ${aggregate.entries} of ${plan.hot} entries handled`);
      const parked = results.reduce((sum, r) => sum + (r.extra?.flowParked ?? 0), 0);
      record(name, { ...aggregate, extra: { ...aggregate.extra, flowParked: parked } });
      progress(`${name}: ${Math.round(eps(aggregate))} entries/s aggregate, ${aggregate.entries} of ${plan.hot} handled, ${parked} parked`);
    };
    for (let rep = 0; rep < plan.reps; rep += 1) {
      await single('product_b100_300B', 'bench:300B');
      // The same keyed stream as flow's, read without leases: what the leases alone cost.
      await single('product_keyed_b100_300B', 'bench:flow:300B');
      // Reads through claim.lua as flow does, without leases: a rate limit that never binds.
      await single('product_lua_read_b100_300B', 'bench:flow:300B', undefined, { limit: 100_000, perMs: 1_000 });
      await single('product_flow_b100_300B', 'bench:flow:300B', { limit: 1 });
      await single('product_flow_strict_b100_300B', 'bench:flow:300B', { limit: 1, order: 'strict' });
      await busy('hot10_4');
      await busy('hot10_4_flow', { limit: 1 });
    }
  } finally {
    admin.disconnect();
    meter.close();
    await server.stop();
    bundle.cleanup();
  }
  printFlowFigures(figures, loadavg());
}

if (process.argv.includes('--against') && (!scaleOnly || againstRevision() === undefined || againstRevision()!.startsWith('--'))) {
  console.error('bench: --against REV goes with --scale and names a revision (e.g. npm run bench -- --scale --against 8f0e0f9)');
  process.exit(2);
}

(reportFrom
  ? Promise.resolve().then(() => reportAgain(reportFrom))
  : commandsOnly
    ? commandsAlone()
    : backoffOnly
      ? backoffAlone()
      : flowOnly
        ? flowAlone()
        : scaleOnly
          ? scaleAlone(here, plan, againstRevision())
          : main()
).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
