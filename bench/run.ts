/**
 * `npm run bench [-- --quick]`: one run, one private redis-server, every scenario in its
 * own child process on the same prefilled streams. Prints a table and writes
 * bench/results/latest.json with the target ratios under `ratios`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedisServer } from '../local/redis-server';
import { jsonPayload, prefillStream } from './fixtures';
import type { ScenarioResult } from './scenarios/types';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const SIZES = { '300B': 300, '64KiB': 64 * 1024 } as const;
type Size = keyof typeof SIZES;

const plan = quick
  ? { reps: 3, small: 6_000, large: 1_000, perMessage: 2_000, bull: 3_000, rest: 2_000, httpSingle: 1_000, httpBatches: 30, latencyMessages: 200 }
  : { reps: 5, small: 20_000, large: 3_000, perMessage: 5_000, bull: 10_000, rest: 5_000, httpSingle: 3_000, httpBatches: 100, latencyMessages: 800 };
/** Untimed warm-up workload per child (see bench/child.ts), the same for every contender. */
const WARMUP: Record<Size, number> = { '300B': 2_000, '64KiB': 500 };
/** Latency samples before this are dropped: the first second of a fresh process. */
const LATENCY_WARMUP_MESSAGES = 40;

interface Figure {
  readonly name: string;
  readonly runs: ScenarioResult[];
}

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);

/**
 * Scenarios run from one esbuild bundle on plain node, as a deployed function would: no
 * TypeScript loader in the measured process (tsx alone adds ~35 MiB RSS and CPU).
 */
async function bundleChild(): Promise<{ file: string; cleanup: () => void }> {
  // Inside the repo so the bundle's external packages resolve from node_modules.
  mkdirSync(join(here, '.build'), { recursive: true });
  const dir = mkdtempSync(join(here, '.build', 'child-'));
  const file = join(dir, 'child.mjs');
  await build({
    entryPoints: [join(here, 'child.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let childFile = '';

function runChild(job: object): Promise<ScenarioResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childFile, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || !line) return reject(new Error(`scenario ${JSON.stringify(job)} failed (exit ${code})`));
      resolve(JSON.parse(line.slice(7)) as ScenarioResult);
    });
  });
}

const eps = (r: ScenarioResult) => r.entries / r.seconds;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const stat = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

async function main(): Promise<void> {
  const bundle = await bundleChild();
  childFile = bundle.file;
  const server = await startRedisServer();
  // Whatever happens, the private server and the bundle go away with the run.
  let latency: ScenarioResult | undefined;
  const figures = new Map<string, ScenarioResult[]>();
  try {
    const admin = new Redis(server.url);
    const record = (name: string, result: ScenarioResult) => figures.set(name, [...(figures.get(name) ?? []), result]);

    const streamCase = async (name: string, scenario: string, size: Size, count: number, batch: number) => {
      const stream = `bench:${name}`;
      const warmupStream = `${stream}:warmup`;
      await prefillStream(admin, stream, count, SIZES[size]);
      await prefillStream(admin, warmupStream, WARMUP[size], SIZES[size]);
      const params = { redisUrl: server.url, stream, group: 'bench', count, batch };
      const result = await runChild({ scenario, params, warmup: { ...params, stream: warmupStream, count: WARMUP[size] } });
      await admin.del(stream, warmupStream);
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} entries/s`);
    };

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
      const result = await runChild({ scenario: 'bullmq', params, warmup: { ...params, queue: `${queueName}-warmup`, count: WARMUP[size] } });
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
      const result = await runChild({ scenario: 'http', params: { redisUrl: server.url, stream, requests, perRequest, inFlight: 16 } });
      await admin.del(stream);
      record(name, result);
      progress(`${name}: ${Math.round(eps(result))} events/s (${Math.round(result.extra!.requestsPerSec!)} requests/s)`);
    };

    for (let rep = 0; rep < plan.reps; rep += 1) {
      progress(`repetition ${rep + 1}/${plan.reps}`);
      for (const batch of [10, 100, 500]) await streamCase(`product_b${batch}_300B`, 'product', '300B', plan.small, batch);
      await streamCase('raw_b500_300B', 'raw', '300B', plan.small, 500);
      await streamCase('per_message_b100_300B', 'per-message', '300B', plan.perMessage, 100);
      for (const c of [1, 10, 50]) await bullCase(c, '300B', plan.bull);
      await streamCase('product_b500_64KiB', 'product', '64KiB', plan.large, 500);
      await streamCase('raw_b500_64KiB', 'raw', '64KiB', plan.large, 500);
      await bullCase(50, '64KiB', plan.large);
      await streamCase('product_rest_b100_300B', 'rest', '300B', plan.rest, 100);
      await httpCase('http_publish_single', plan.httpSingle, 1);
      await httpCase('http_publish_batch100', plan.httpBatches, 100);
    }
    progress('latency: continuous mode at 40 msg/s');
    latency = await runChild({
      scenario: 'latency',
      params: { redisUrl: server.url, stream: 'bench:latency', ratePerSecond: 40, messages: plan.latencyMessages, warmupMessages: LATENCY_WARMUP_MESSAGES },
    });
    record('latency_continuous_40mps', latency);

    admin.disconnect();
  } finally {
    await server.stop();
    bundle.cleanup();
  }
  report(figures, latency!);
}

/** HTTP requests counted at the REST server per round that handled entries (the final, empty claim costs one). */
function restRoundTrips(run: ScenarioResult): number {
  const busy = run.extra!.busyRounds!;
  const empty = run.rounds! - busy;
  return (run.extra!.httpRequests! - empty) / busy;
}

function pairRatio(figures: Map<string, ScenarioResult[]>, a: string, b: string) {
  const xs = figures.get(a)!;
  const ys = figures.get(b)!;
  return stat(xs.map((x, i) => eps(x) / eps(ys[i]!)));
}

function report(figures: Map<string, ScenarioResult[]>, latency: ScenarioResult): void {
  const rows = [...figures.entries()].filter(([name]) => !name.startsWith('latency')).map(([name, runs]) => {
    const rate = stat(runs.map(eps));
    const rt = runs[0]!.roundTrips;
    return {
      name,
      entriesPerSec: rate,
      roundTripsPer1000: rt === undefined ? null : Math.round((rt / runs[0]!.entries) * 1000 * 10) / 10,
      // Steady state – first round (a cold script cache costs one extra round trip per script).
      roundTripsPerRound: runs[0]!.extra?.roundTripsPerBusyRoundMax === undefined
        ? null
        : `${Math.min(...runs.map((r) => r.extra!.roundTripsPerBusyRoundMin!))}–${Math.max(...runs.map((r) => r.extra!.roundTripsPerBusyRoundMax!))}`,
      rssPeakMiB: stat(runs.map((r) => r.rssPeakMiB)),
    };
  });
  const product500Large = figures.get('product_b500_64KiB')!;
  const ratios = {
    product_over_raw_b500_300B: pairRatio(figures, 'product_b500_300B', 'raw_b500_300B'),
    product_over_per_message_b100: pairRatio(figures, 'product_b100_300B', 'per_message_b100_300B'),
    product_b100_over_bullmq_c50: pairRatio(figures, 'product_b100_300B', 'bullmq_c50_300B'),
    product_over_raw_b500_64KiB: pairRatio(figures, 'product_b500_64KiB', 'raw_b500_64KiB'),
    rss_peak_mib_b500_64KiB: stat(product500Large.map((r) => r.rssPeakMiB)),
    latency_p99_ms_continuous: latency.extra!.p99!,
    // b500 runs after b10/b100 in each repetition, on a warm script cache: every round counts.
    round_trips_per_round_tcp: Math.max(...figures.get('product_b500_300B')!.map((r) => r.extra!.roundTripsPerBusyRoundMax!)),
    round_trips_per_round_rest: Math.max(...figures.get('product_rest_b100_300B')!.map(restRoundTrips)),
  };
  const targets: Record<string, [string, number]> = {
    product_over_raw_b500_300B: ['>=', 0.75],
    product_over_per_message_b100: ['>=', 4],
    product_b100_over_bullmq_c50: ['>=', 3],
    product_over_raw_b500_64KiB: ['>=', 0.8],
    rss_peak_mib_b500_64KiB: ['<=', 200],
    latency_p99_ms_continuous: ['<=', 5],
    round_trips_per_round_tcp: ['==', 2],
    round_trips_per_round_rest: ['==', 2],
  };

  const fmt = (n: number) => (n >= 100 ? Math.round(n).toString() : n.toFixed(2));
  console.log(`\nsaga-streams benchmark (${quick ? 'quick' : 'full'}; ${plan.reps} repetitions; median [min–max])\n`);
  console.log('scenario'.padEnd(28) + 'entries/s'.padEnd(30) + 'RT/1000'.padEnd(10) + 'RT/round'.padEnd(10) + 'RSS MiB');
  for (const row of rows) {
    const r = row.entriesPerSec;
    console.log(
      row.name.padEnd(28) +
        `${fmt(r.median)} [${fmt(r.min)}–${fmt(r.max)}]`.padEnd(30) +
        String(row.roundTripsPer1000 ?? '-').padEnd(10) +
        String(row.roundTripsPerRound ?? '-').padEnd(10) +
        fmt(row.rssPeakMiB.median),
    );
  }
  const l = latency.extra!;
  console.log(`\nlatency publish→handler @40 msg/s: p50 ${fmt(l.p50!)} ms, p90 ${fmt(l.p90!)} ms, p99 ${fmt(l.p99!)} ms, max ${fmt(l.max!)} ms`);
  console.log('\ntarget'.padEnd(36) + 'value'.padEnd(30) + 'target');
  for (const [key, value] of Object.entries(ratios)) {
    const v = typeof value === 'number' ? value : value.median;
    const [op, goal] = targets[key]!;
    const met = op === '>=' ? v >= goal : op === '<=' ? v <= goal : v === goal;
    const shown = typeof value === 'number' ? fmt(value) : `${fmt(value.median)} [${fmt(value.min)}–${fmt(value.max)}]`;
    console.log(key.padEnd(35) + shown.padEnd(30) + `${op} ${goal} ${met ? 'met' : 'MISSED'}`);
  }
  const flat = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, typeof v === 'number' ? v : v.median]));
  const out = join(here, 'results', 'latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    JSON.stringify({ mode: quick ? 'quick' : 'full', at: new Date().toISOString(), repetitions: plan.reps, ratios: flat, ratioSpread: ratios, scenarios: rows, latency: latency.extra }, null, 2),
  );
  console.log(`\nwrote ${out}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
