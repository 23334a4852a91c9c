/**
 * The `profile` section of bench/results/latest.json and its table: for every stream
 * scenario, where the CPU per entry of the timed part goes — Node (user and system, all
 * processes of a side-by-side run together), Redis (INFO cpu of the server or Cluster
 * masters the run used) and Redis per command — and the same pairs as `ratios` taken on
 * total CPU per entry. A ratio that misses its target on a CPU-bound run is bounded by what
 * each side spends per entry, and CPU per entry moves far less with the machine's load
 * than entries/s does.
 */
import { cpus } from 'node:os';
import type { RedisFigures, ScenarioResult } from './scenarios/types';
import { fmt, median, stat, type Stat } from './stats';

type Figures = Map<string, ScenarioResult[]>;

export interface ScenarioProfile {
  readonly processes: number;
  readonly entriesPerSec: Stat;
  readonly nodeCpuMicrosPerEntry: Stat | null;
  readonly nodeCpuUserMicrosPerEntry: Stat | null;
  readonly nodeCpuSystemMicrosPerEntry: Stat | null;
  readonly redisCpuMicrosPerEntry: Stat;
  readonly totalCpuMicrosPerEntry: Stat | null;
  /** Cores the run kept busy: entries/s × total CPU per entry. Near the core count means CPU-bound. */
  readonly coresBusy: Stat | null;
  readonly involuntaryContextSwitchesPer1k: Stat | null;
  /** The costliest commands, medians over the repetitions (a command missing from one counts 0 there). */
  readonly redisCommands: Record<string, { readonly callsPer1k: number; readonly microsPerEntry: number }>;
}

export interface Profile {
  readonly note: string;
  readonly scenarios: Record<string, ScenarioProfile>;
  /** The pairs of `ratios`, on total CPU per entry (first ÷ second), pair by pair, median. */
  readonly totalCpuRatios: Record<string, Stat>;
}

const NOTE =
  'µs of CPU per entry of the timed part (warm-up excluded), medians [min–max] over the repetitions. ' +
  'Node: the consuming process(es), user and system; Redis: used_cpu_user + used_cpu_sys delta of the server(s) the run used ' +
  '(Cluster: the three masters summed). redisCommands from INFO commandstats: evalsha µs include the commands its script ' +
  'calls (which also appear on their own rows), and no command holds Redis network I/O, so the rows do not add up to Redis CPU. ' +
  'Redis CPU also holds its background cron (~1–2 ms per second per server), visible only on slow runs. ' +
  'coresBusy: entries/s × total CPU per entry; near the core count the run is CPU-bound. ' +
  'totalCpuRatios: the pairs of `ratios` on (Node + Redis) µs per entry; on a CPU-bound run the entries/s ratio cannot exceed its inverse.';

/** The same pairs as `ratios` in report.ts, where both sides are profiled stream scenarios. */
const PAIRS: Record<string, readonly [string, string]> = {
  product_over_raw_verify_b500_300B: ['product_b500_300B', 'raw_verify_b500_300B'],
  product_over_raw_verify_b100_300B: ['product_b100_300B', 'raw_verify_b100_300B'],
  product_over_raw_b500_300B: ['product_b500_300B', 'raw_b500_300B'],
  product_over_raw_b100_300B: ['product_b100_300B', 'raw_b100_300B'],
  product_over_per_message_b100: ['product_b100_300B', 'per_message_b100_300B'],
  product_over_raw_b500_64KiB: ['product_b500_64KiB', 'raw_b500_64KiB'],
  scale_1_over_raw_verify_1: ['scale_1', 'scale_raw_verify_1'],
  scale_2_over_raw_verify_2: ['scale_2', 'scale_raw_verify_2'],
  scale_4_over_raw_verify_4: ['scale_4', 'scale_raw_verify_4'],
  scale_cluster3_over_raw_verify_cluster3: ['scale_cluster3', 'scale_raw_verify_cluster3'],
};
const TOP_COMMANDS = 6;

const node = (r: ScenarioResult) => r.extra?.nodeCpuMicrosPerEntry;
const total = (r: ScenarioResult) => (node(r) === undefined ? undefined : node(r)! + r.redis!.cpuMicrosPerEntry);

/** A Stat of a per-run figure, or null when some run lacks it (a scenario that does not measure Node CPU). */
function statOf(runs: readonly ScenarioResult[], figure: (r: ScenarioResult) => number | undefined): Stat | null {
  const values = runs.map(figure);
  return values.every((v): v is number => v !== undefined) ? stat(values) : null;
}

function topCommands(runs: readonly RedisFigures[]): ScenarioProfile['redisCommands'] {
  const names = new Set(runs.flatMap((r) => Object.keys(r.commands)));
  const rows = [...names].map((name) => ({
    name,
    callsPer1k: median(runs.map((r) => r.commands[name]?.callsPer1k ?? 0)),
    microsPerEntry: median(runs.map((r) => r.commands[name]?.microsPerEntry ?? 0)),
  }));
  rows.sort((a, b) => b.microsPerEntry - a.microsPerEntry);
  return Object.fromEntries(rows.slice(0, TOP_COMMANDS).map(({ name, ...figures }) => [name, figures]));
}

function scenarioProfile(runs: readonly ScenarioResult[]): ScenarioProfile {
  const eps = (r: ScenarioResult) => r.entries / r.seconds;
  const extra = (key: string) => (r: ScenarioResult) => r.extra?.[key];
  return {
    processes: runs[0]!.extra?.processes ?? 1,
    entriesPerSec: stat(runs.map(eps)),
    nodeCpuMicrosPerEntry: statOf(runs, node),
    nodeCpuUserMicrosPerEntry: statOf(runs, extra('nodeCpuUserMicrosPerEntry')),
    nodeCpuSystemMicrosPerEntry: statOf(runs, extra('nodeCpuSystemMicrosPerEntry')),
    redisCpuMicrosPerEntry: stat(runs.map((r) => r.redis!.cpuMicrosPerEntry)),
    totalCpuMicrosPerEntry: statOf(runs, total),
    coresBusy: statOf(runs, (r) => (total(r) === undefined ? undefined : (eps(r) * total(r)!) / 1e6)),
    involuntaryContextSwitchesPer1k: statOf(runs, extra('involuntaryContextSwitchesPer1k')),
    redisCommands: topCommands(runs.map((r) => r.redis!)),
  };
}

/** Every scenario whose runs all carry Redis figures (a runs.json from before the profile has none). */
export function profileOf(figures: Figures): Profile {
  const scenarios: Record<string, ScenarioProfile> = {};
  for (const [name, runs] of figures) if (runs.every((r) => r.redis !== undefined)) scenarios[name] = scenarioProfile(runs);
  const totalCpuRatios: Record<string, Stat> = {};
  for (const [key, [a, b]] of Object.entries(PAIRS)) {
    const as = figures.get(a);
    const bs = figures.get(b);
    if (!scenarios[a]?.totalCpuMicrosPerEntry || !scenarios[b]?.totalCpuMicrosPerEntry) continue;
    totalCpuRatios[key] = stat(as!.map((x, i) => total(x)! / total(bs![i]!)!));
  }
  return { note: NOTE, scenarios, totalCpuRatios };
}

const spread = (s: Stat | null) => (s ? `${fmt(s.median)} [${fmt(s.min)}–${fmt(s.max)}]` : 'n/a');

export function printProfile(profile: Profile): void {
  const rows = Object.entries(profile.scenarios);
  if (rows.length === 0) return;
  console.log('\nwhere the CPU per entry goes (timed part; medians; µs per entry; Redis: INFO cpu of the server(s) used, Cluster masters summed)');
  console.log(
    'scenario'.padEnd(30) + 'entries/s'.padEnd(11) + 'Node (user+sys)'.padEnd(20) + 'Redis'.padEnd(8) + 'total'.padEnd(8) + 'cores busy'.padEnd(12) + 'invol. cs/1k',
  );
  for (const [name, p] of rows) {
    const split = p.nodeCpuUserMicrosPerEntry && p.nodeCpuSystemMicrosPerEntry ? ` (${fmt(p.nodeCpuUserMicrosPerEntry.median)}+${fmt(p.nodeCpuSystemMicrosPerEntry.median)})` : '';
    console.log(
      name.padEnd(30) +
        fmt(p.entriesPerSec.median).padEnd(11) +
        `${fmt(p.nodeCpuMicrosPerEntry?.median)}${split}`.padEnd(20) +
        fmt(p.redisCpuMicrosPerEntry.median).padEnd(8) +
        fmt(p.totalCpuMicrosPerEntry?.median).padEnd(8) +
        fmt(p.coresBusy?.median).padEnd(12) +
        fmt(p.involuntaryContextSwitchesPer1k?.median),
    );
  }
  console.log(
    '\nRedis µs per entry by command (INFO commandstats; [calls per 1k entries]). evalsha includes the commands its script calls,\n' +
      'which appear on their own rows too, and no row holds network I/O: the rows do not add up to the Redis column.',
  );
  for (const [name, p] of rows) {
    const commands = Object.entries(p.redisCommands).map(([c, f]) => `${c} ${fmt(f.microsPerEntry)} [${fmt(f.callsPer1k)}]`);
    console.log(`  ${name.padEnd(28)}${commands.join(', ')}`);
  }
  console.log('\ntotal CPU per entry, first ÷ second of each ratio (paired; a CPU-bound run cannot beat the inverse on entries/s)');
  for (const [key, s] of Object.entries(profile.totalCpuRatios)) console.log(`  ${key.padEnd(42)}${spread(s)}`);
  const scale4 = profile.scenarios.scale_4;
  const s4 = scale4?.totalCpuMicrosPerEntry;
  const v4 = profile.scenarios.scale_raw_verify_4?.totalCpuMicrosPerEntry;
  const r4 = profile.totalCpuRatios.scale_4_over_raw_verify_4;
  if (s4 && v4 && r4 && scale4.coresBusy) console.log(scale4Bound(s4.median, v4.median, r4.median, scale4.coresBusy.median));
}

/**
 * Four processes and Redis on a 2-core machine are CPU-bound when nothing else runs: then
 * entries/s is cores ÷ total CPU per entry, and the throughput ratio cannot beat the inverse
 * of the CPU ratio. On a loaded machine the run gets far fewer than its cores, which the
 * cores-busy figure shows, and the bound is what a quiet run would hit.
 */
function scale4Bound(product: number, rawVerify: number, ratio: number, coresBusy: number): string {
  const cores = cpus().length;
  const head = `scale_4: total CPU per entry product ${fmt(product)} µs vs raw_verify ${fmt(rawVerify)} µs (× ${fmt(ratio)})`;
  const bound = `scale_4_over_raw_verify_4 ≤ ~${fmt(1 / ratio)}`;
  return coresBusy >= 0.75 * cores
    ? `${head}; the run kept ${fmt(coresBusy)} of ${cores} cores busy, i.e. CPU-bound, so ${bound}`
    : `${head}; the run kept only ${fmt(coresBusy)} of ${cores} cores busy (other load set the pace); a quiet machine would be CPU-bound there, and ${bound}`;
}
