/**
 * `npm run bench:instructions [-- product,raw-verify 100,500] [--reps N] [--threads] [--redis]`: Node instructions
 * per entry of the real consumer child against a real Redis, counted by valgrind's
 * callgrind. Entries/s and even CPU time move with whatever else the machine runs; an
 * instruction count does not, so this is the measure to decide a per-entry optimisation by
 * on a shared machine (it leaves out Redis's work, and cache misses and stalls: a cheaper
 * count that is slower in wall time is possible, if rare).
 *
 * For each scenario and batch the child — the same esbuild bundle `npm run bench` runs, no
 * warm-up pass — drains a stream of SHORT signed 300 B entries, then one of LONG, under
 * callgrind; (count(LONG) − count(SHORT)) / (LONG − SHORT) is the steady cost of an entry,
 * with start-up, module loading and most JIT compilation cancelling out. Takes minutes, so it
 * is in neither `npm test` nor `npm run bench`. Writes bench/results/instructions.json.
 *
 * With `--redis` the other side is counted: the Redis server runs under callgrind (zeroed
 * before each drain, dumped after it) and the child natively — the server's instructions per
 * entry (its commands, its Lua, its network I/O), the measure flow control's scripts were
 * decided by (issue 27). Writes bench/results/instructions-redis.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort, redisServerBinary, spawnRedisServer, startRedisServer } from '../local/redis-server';
import { prefillStream, resetGroup } from './fixtures';
import { SIZES } from './plan';
import type { ScenarioResult } from './scenarios/types';
import { bundleChild } from './spawn';
import { fmt, stat, type Stat } from './stats';

const here = dirname(fileURLToPath(import.meta.url));
const outFile = (side: Side) => join(here, 'results', side === 'redis' ? 'instructions-redis.json' : 'instructions.json');
/**
 * `product-flow`: the product with flow leases (limit 1) over entries spread on 1,000 flow keys
 * (issue 27); `product-flow-strict` the same under strict order; `product-keyed` the product
 * without leases over those keyed entries (what the key field alone costs).
 */
const SCENARIOS = ['product', 'product-flow', 'product-flow-strict', 'product-keyed', 'raw-verify', 'raw'] as const;
const KEYED: readonly Scenario[] = ['product-flow', 'product-flow-strict', 'product-keyed'];
const flowConfigOf = (scenario: Scenario) =>
  scenario === 'product-flow' ? { flow: { limit: 1 } } : scenario === 'product-flow-strict' ? { flow: { limit: 1, order: 'strict' } } : {};
const FLOW_KEYS = 1_000;
type Scenario = (typeof SCENARIOS)[number];
/** Whose instructions are counted: the consuming child's, or the Redis server's (`--redis`). */
type Side = 'node' | 'redis';
const SHORT = 4_000;
const LONG = 12_000;
const GROUP = 'bench';
/** One prefilled stream per drain length: a drain ends when its stream is exhausted. */
const streamOf = (entries: number, scenario?: Scenario) => (scenario !== undefined && KEYED.includes(scenario) ? `instructions:flow:${entries}` : `instructions:${entries}`);

const progress = (line: string) => process.stderr.write(`bench:instructions: ${line}\n`);

interface Args {
  readonly scenarios: Scenario[];
  readonly batches: number[];
  readonly reps: number;
  /**
   * V8 without its background compile and GC threads (node --single-threaded), unless
   * `--threads`: their share of the work varies with timing, and with them the count moved
   * with the machine's load (raw_verify b100: 87.4k on a quieter machine, 102–108k at load
   * 11–14) where without them it repeated within 1.5 % at load 14.
   */
  readonly singleThreaded: boolean;
  readonly side: Side;
}

function parseArgs(argv: readonly string[]): Args {
  const reps = argv.includes('--reps') ? Number(argv[argv.indexOf('--reps') + 1]) : 1;
  const positional = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--reps');
  const scenarios = (positional[0] ?? 'product,raw-verify').split(',');
  const batches = (positional[1] ?? '100,500').split(',').map(Number);
  const unknown = scenarios.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}: use any of ${SCENARIOS.join(', ')}`);
  if (batches.some((b) => !Number.isInteger(b) || b < 1)) throw new Error(`batches must be positive integers, got ${positional[1]}`);
  if (!Number.isInteger(reps) || reps < 1) throw new Error('--reps takes a positive integer');
  return { scenarios: scenarios as Scenario[], batches, reps, singleThreaded: !argv.includes('--threads'), side: argv.includes('--redis') ? 'redis' : 'node' };
}

/** The valgrind version line, or a clear error when it is not installed. */
function valgrindVersion(): string {
  const probe = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error('valgrind is not installed (this tool runs the consumer under `valgrind --tool=callgrind`): apt-get install -y valgrind');
  }
  return probe.stdout.trim();
}

/** Total instructions of every thread of the process, from callgrind's output file. */
function totalInstructions(file: string): number {
  const text = readFileSync(file, 'utf8');
  const match = /^summary:\s*(\d+)/m.exec(text) ?? /^totals:\s*(\d+)/m.exec(text);
  if (!match) throw new Error(`no summary line in callgrind output ${file}`);
  return Number(match[1]);
}

/** Runs one child draining `entries` under callgrind; the run must handle every entry or its count means nothing. */
async function countInstructions(childFile: string, job: object, entries: number, scratch: string, nodeFlags: string[]): Promise<number> {
  const outFile = join(scratch, `callgrind-${entries}.out`);
  await drain('valgrind', ['--tool=callgrind', `--callgrind-out-file=${outFile}`, process.execPath, ...nodeFlags, childFile, JSON.stringify(job)], entries);
  const total = totalInstructions(outFile);
  rmSync(outFile);
  return total;
}

/** A redis-server under callgrind (the wrapper execs valgrind, so the server's pid is valgrind's). */
async function startRedisUnderCallgrind(scratch: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const wrapper = join(scratch, 'redis-under-callgrind.sh');
  const dumps = join(scratch, 'redis.%p');
  writeFileSync(wrapper, `#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file='${dumps}' --dump-instr=no '${redisServerBinary()}' "$@"\n`, { mode: 0o755 });
  const port = await freePort();
  const child = await spawnRedisServer(port, scratch, ['--appendonly', 'no'], undefined, wrapper);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop };
}

/** callgrind_control on the server: `-z` zeroes its counts, `-d` dumps them to a new file. */
function callgrindControl(flag: '-z' | '-d', pid: number): void {
  const run = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (run.error || run.status !== 0) throw new Error(`callgrind_control ${flag} ${pid} failed: ${run.error?.message ?? run.stderr}`);
}

/** The server's instructions while one child (run natively) drains `entries`. */
async function countRedisInstructions(pid: number, childFile: string, job: object, entries: number, scratch: string): Promise<number> {
  const dumpsBefore = new Set(readdirSync(scratch));
  callgrindControl('-z', pid);
  await drain(process.execPath, [childFile, JSON.stringify(job)], entries);
  callgrindControl('-d', pid);
  const dump = readdirSync(scratch).find((name) => name.startsWith(`redis.${pid}.`) && !dumpsBefore.has(name));
  if (dump === undefined) throw new Error(`callgrind wrote no dump for the Redis server (pid ${pid}) in ${scratch}`);
  const total = totalInstructions(join(scratch, dump));
  rmSync(join(scratch, dump));
  return total;
}

/** Runs one child that drains `entries`; it must handle every one, or a count over its run means nothing. */
async function drain(command: string, argv: readonly string[], entries: number): Promise<void> {
  const child = spawn(command, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`child failed (exit ${code}):\n${stderr.slice(-2_000)}`);
  const handled = (JSON.parse(line.slice(7)) as ScenarioResult).entries;
  if (handled !== entries) throw new Error(`child handled ${handled} of ${entries} entries`);
}

interface Measured {
  readonly instructionsPerEntry: Stat;
  /** Whole-process counts of each repetition, SHORT and LONG drains. */
  readonly totals: Array<{ short: number; long: number }>;
}

async function main(args: Args): Promise<void> {
  const valgrind = valgrindVersion();
  const scratch = mkdtempSync(join(tmpdir(), 'saga-streams-callgrind-'));
  const bundle = await bundleChild(here);
  const underCallgrind = args.side === 'redis' ? await startRedisUnderCallgrind(scratch) : undefined;
  const server = underCallgrind ?? (await startRedisServer());
  const admin = new Redis(server.url);
  const results: Record<string, Measured> = {};
  try {
    progress(`prefilling ${SHORT} and ${LONG} signed ${SIZES['300B']} B entries`);
    for (const n of [SHORT, LONG]) await prefillStream(admin, streamOf(n), n, SIZES['300B']);
    if (args.scenarios.some((scenario) => KEYED.includes(scenario))) {
      progress(`prefilling the same on ${FLOW_KEYS.toLocaleString('en')} flow keys`);
      for (const n of [SHORT, LONG]) await prefillStream(admin, streamOf(n, 'product-keyed'), n, SIZES['300B'], FLOW_KEYS);
    }
    const runs = args.scenarios.length * args.batches.length * args.reps * 2;
    let done = 0;
    for (const batch of args.batches) {
      for (const scenario of args.scenarios) {
        const totals: Array<{ short: number; long: number }> = [];
        for (let rep = 0; rep < args.reps; rep += 1) {
          const counts: number[] = [];
          for (const n of [SHORT, LONG]) {
            const stream = streamOf(n, scenario);
            await resetGroup(admin, stream, GROUP);
            done += 1;
            progress(`[${done}/${runs}] ${scenario} b${batch}: draining ${n} entries, ${args.side === 'redis' ? 'the Redis server' : 'the consumer'} under callgrind…`);
            const started = performance.now();
            const params = { redisUrl: server.url, group: GROUP, stream, count: n, batch, consumer: 'instructions', ...flowConfigOf(scenario) };
            const job = { scenario: scenario.startsWith('product') ? 'product' : scenario, params };
            counts.push(
              underCallgrind
                ? await countRedisInstructions(underCallgrind.pid, bundle.file, job, n, scratch)
                : await countInstructions(bundle.file, job, n, scratch, args.singleThreaded ? ['--single-threaded'] : []),
            );
            progress(`[${done}/${runs}] ${scenario} b${batch} ${n} entries: ${counts.at(-1)!.toLocaleString('en')} instructions (${Math.round((performance.now() - started) / 1000)} s)`);
          }
          totals.push({ short: counts[0]!, long: counts[1]! });
        }
        const perEntry = stat(totals.map((t) => (t.long - t.short) / (LONG - SHORT)));
        results[`${scenario.replaceAll('-', '_')}_b${batch}`] = { instructionsPerEntry: perEntry, totals };
      }
    }
  } finally {
    admin.disconnect();
    await server.stop();
    bundle.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
  report(results, args, valgrind);
}

function report(results: Record<string, Measured>, args: Args, valgrind: string): void {
  const ratios: Record<string, number> = {};
  for (const batch of args.batches) {
    const product = results[`product_b${batch}`];
    for (const keyed of KEYED.map((scenario) => scenario.replaceAll('-', '_'))) {
      const measured = results[`${keyed}_b${batch}`];
      if (product && measured) ratios[`${keyed}_over_product_b${batch}`] = measured.instructionsPerEntry.median / product.instructionsPerEntry.median;
    }
    for (const other of ['raw_verify', 'raw']) {
      const baseline = results[`${other}_b${batch}`];
      if (product && baseline) ratios[`product_over_${other}_b${batch}`] = product.instructionsPerEntry.median / baseline.instructionsPerEntry.median;
    }
  }
  const counted = args.side === 'redis' ? 'Redis server instructions per entry (the consumer run natively)' : 'Node instructions per entry of the consuming process';
  const flags = args.side === 'redis' ? '' : `; ${args.singleThreaded ? 'node --single-threaded' : 'V8 background threads on'}`;
  console.log(`\n${counted} (callgrind; (${LONG}-entry drain − ${SHORT}-entry drain) / ${LONG - SHORT}; ${args.reps} repetition(s)${flags})`);
  for (const [key, m] of Object.entries(results)) {
    const spread = args.reps > 1 ? ` [${fmt(m.instructionsPerEntry.min)}–${fmt(m.instructionsPerEntry.max)}]` : '';
    console.log(`  ${key.padEnd(28)}${Math.round(m.instructionsPerEntry.median).toLocaleString('en')}${spread}`);
  }
  for (const [key, ratio] of Object.entries(ratios)) console.log(`  ${key.padEnd(44)}${ratio.toFixed(3)}`);
  const file = outFile(args.side);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        node: process.version,
        valgrind,
        method: `(instructions of a ${LONG}-entry drain − of a ${SHORT}-entry drain) / ${LONG - SHORT}; signed ${SIZES['300B']} B entries; ${args.side === 'redis' ? 'the Redis server only (the consumer run natively)' : 'the consuming child only (Redis not counted)'}`,
        entries: { short: SHORT, long: LONG },
        repetitions: args.reps,
        side: args.side,
        nodeFlags: args.side === 'node' && args.singleThreaded ? ['--single-threaded'] : [],
        instructionsPerEntry: Object.fromEntries(Object.entries(results).map(([k, m]) => [k, Math.round(m.instructionsPerEntry.median)])),
        ratios,
        runs: results,
      },
      null,
      2,
    ),
  );
  console.log(`\nwrote ${file}`);
}

Promise.resolve()
  .then(() => main(parseArgs(process.argv.slice(2))))
  .catch((error: unknown) => {
    console.error(`bench:instructions: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
