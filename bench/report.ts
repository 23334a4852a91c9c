/**
 * The run's report: a table per scenario, the target ratios (issue 15's table; pair by pair
 * within the run, medians of the repetitions), the raw loop's absolute figure and the load
 * average beside them, where each stream scenario's CPU per entry goes (bench/profile.ts),
 * and bench/results/latest.json.
 */
import { cpus } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ColdImport } from './cold-import';
import type { CommandCosts } from './scenarios/command-cost';
import type { Plan } from './plan';
import { printProfile, profileOf } from './profile';
import type { ScenarioResult } from './scenarios/types';
import { fmt, stat, type Stat } from './stats';

export interface RunContext {
  readonly quick: boolean;
  readonly plan: Plan;
  readonly loadAtStart: number[];
  readonly loadAtEnd: number[];
  readonly loadPerRepetition: number[][];
  readonly coldImport: ColdImport;
  /** Absent in a runs.json written before the command cost was measured. */
  readonly commandCosts?: CommandCosts;
}

type Figures = Map<string, ScenarioResult[]>;

const eps = (r: ScenarioResult) => r.entries / r.seconds;

function runsOf(figures: Figures, name: string): ScenarioResult[] {
  const runs = figures.get(name);
  if (!runs) throw new Error(`no runs of ${name}`);
  return runs;
}

/** Ratio of two scenarios repetition by repetition (they ran back to back), then the median. */
function pair(figures: Figures, a: string, b: string, measure: (r: ScenarioResult) => number = eps): Stat {
  const ys = runsOf(figures, b);
  return stat(runsOf(figures, a).map((x, i) => measure(x) / measure(ys[i]!)));
}

type Target = readonly ['>=' | '<=', number] | undefined;

/**
 * Commands a per-command price bills (SPEC §10): an idle poll run at most 1, an idle trim at
 * most 1 per stream; the busy drain's commands per 1,000 entries (batch 100) without a target.
 */
export function commandCostRatios(costs: CommandCosts): Record<string, { value: number; target: Target }> {
  const ratios: Record<string, { value: number; target: Target }> = {};
  for (const transport of ['tcp', 'rest'] as const) {
    const cost = costs[transport];
    ratios[`commands_per_idle_poll_run_${transport}`] = { value: cost.idlePollRun, target: ['<=', 1] };
    ratios[`commands_per_idle_trim_per_stream_${transport}`] = { value: cost.idleTrimPerStream, target: ['<=', 1] };
    ratios[`commands_per_1k_entries_${transport}`] = { value: cost.per1kEntries, target: undefined };
  }
  return ratios;
}

/** The command cost with the commands of each idle run, so a reader sees what they were. */
export function printCommandCosts(costs: CommandCosts): void {
  console.log(`\ncommands billed per run (counted on the wire; busy: drain of ${costs.busyEntries} entries at batch 100)`);
  console.log('transport'.padEnd(11) + 'idle poll run'.padEnd(15) + 'idle trim / stream'.padEnd(20) + 'per 1k entries (busy)');
  for (const transport of ['tcp', 'rest'] as const) {
    const cost = costs[transport];
    console.log(transport.padEnd(11) + String(cost.idlePollRun).padEnd(15) + String(cost.idleTrimPerStream).padEnd(20) + String(cost.per1kEntries));
  }
  console.log(`idle poll run (tcp): ${costs.tcp.idlePollCommands.join(', ')}; idle trim (tcp): ${costs.tcp.idleTrimCommands.join(', ')}`);
}

/** Every key of issue 15's targets table, the older keys that still mean something, and the cold import (issue 14). */
function ratiosOf(figures: Figures, latency: ScenarioResult, context: RunContext): Record<string, { value: Stat | number; target: Target }> {
  const rss = (r: ScenarioResult) => r.rssPeakMiB;
  const steady = (name: string) => stat(runsOf(figures, name).flatMap((r) => r.extra?.roundTripsPerSteadyRound ?? []));
  return {
    product_over_raw_verify_b500_300B: { value: pair(figures, 'product_b500_300B', 'raw_verify_b500_300B'), target: ['>=', 1.2] },
    product_over_raw_verify_b100_300B: { value: pair(figures, 'product_b100_300B', 'raw_verify_b100_300B'), target: ['>=', 1.2] },
    product_over_raw_b500_300B: { value: pair(figures, 'product_b500_300B', 'raw_b500_300B'), target: ['>=', 0.6] },
    product_over_raw_b100_300B: { value: pair(figures, 'product_b100_300B', 'raw_b100_300B'), target: undefined },
    raw_verify_over_raw_b500_300B: { value: pair(figures, 'raw_verify_b500_300B', 'raw_b500_300B'), target: undefined },
    product_over_per_message_b100: { value: pair(figures, 'product_b100_300B', 'per_message_b100_300B'), target: ['>=', 8] },
    product_b100_over_bullmq_c50: { value: pair(figures, 'product_b100_300B', 'bullmq_c50_300B'), target: ['>=', 4] },
    product_over_raw_b500_64KiB: { value: pair(figures, 'product_b500_64KiB', 'raw_b500_64KiB'), target: ['>=', 0.85] },
    ...backoffRatios(figures),
    rss_product_over_raw_b500_64KiB: { value: pair(figures, 'product_b500_64KiB', 'raw_b500_64KiB', rss), target: ['<=', 0.6] },
    rss_peak_mib_b500_64KiB: { value: stat(runsOf(figures, 'product_b500_64KiB').map(rss)), target: undefined },
    latency_p99_ms_continuous: { value: latency.extra!.p99!, target: ['<=', 5] },
    latency_p50_ms_continuous: { value: latency.extra!.p50!, target: ['<=', 1] },
    round_trips_per_steady_round_tcp: { value: steady('product_b500_300B'), target: ['<=', 1] },
    round_trips_per_steady_round_rest: { value: steady('product_rest_b100_300B'), target: ['<=', 1] },
    ...scaleRatios(figures),
    cold_import_ms_poll_bundle: { value: context.coldImport.medianMs, target: ['<=', 80] },
    cold_import_ms_trivial_module: { value: context.coldImport.baselineMedianMs, target: undefined },
    ...(context.commandCosts ? commandCostRatios(context.commandCosts) : {}),
  };
}

/**
 * Issue 26: the product with its default exponential retry backoff and nothing retained, over
 * the same with `fixed` backoff (the reclaim rule from before backoff): within noise of 1. And
 * the reclaim path: a drain that reclaims a crashed consumer's backlog, its entries/s against
 * a fresh drain's and Redis's CPU per reclaimed entry.
 */
function backoffRatios(figures: Figures): Record<string, { value: Stat | number; target: Target }> {
  const redisCpu = (name: string) => stat(runsOf(figures, name).map((r) => r.redis?.cpuMicrosPerEntry ?? Number.NaN));
  return {
    product_backoff_over_fixed_b100_300B: { value: pair(figures, 'product_b100_300B', 'product_fixed_b100_300B'), target: ['>=', 0.9] },
    product_reclaim_over_product_b100_300B: { value: pair(figures, 'product_reclaim_b100_300B', 'product_b100_300B'), target: undefined },
    redis_cpu_us_per_entry_product_b100_300B: { value: redisCpu('product_b100_300B'), target: undefined },
    redis_cpu_us_per_entry_reclaim_b100_300B: { value: redisCpu('product_reclaim_b100_300B'), target: undefined },
  };
}

/** `--backoff` alone: each scenario's entries/s and Redis CPU per entry, and the ratios. */
export function printBackoffFigures(figures: Figures): void {
  console.log('\nretry backoff (issue 26): median [min–max] over the repetitions');
  console.log('scenario'.padEnd(30) + 'entries/s'.padEnd(30) + 'Redis CPU µs/entry');
  for (const [name, runs] of figures) {
    const cpu = stat(runs.map((r) => r.redis?.cpuMicrosPerEntry ?? Number.NaN));
    console.log(name.padEnd(30) + shown(stat(runs.map(eps))).padEnd(30) + shown(cpu));
  }
  console.log('');
  for (const [key, { value, target }] of Object.entries(backoffRatios(figures))) console.log(key.padEnd(44) + shown(value).padEnd(30) + met(valueOf(value), target));
}

/**
 * Scale-out over `raw_verify` at the same process count; the owner's target at 4 processes is
 * 0.9 (settle stays in Lua). `suffix` names another revision's product cases (`@REV`).
 */
function scaleRatios(figures: Figures, suffix = ''): Record<string, { value: Stat; target: Target }> {
  const ratios: Record<string, { value: Stat; target: Target }> = {};
  for (const n of [1, 2, 4, 'cluster3'] as const) {
    ratios[`scale_${n}${suffix}_over_raw_verify_${n}`] = { value: pair(figures, `scale_${n}${suffix}`, `scale_raw_verify_${n}`), target: n === 4 ? ['>=', 0.9] : undefined };
  }
  return ratios;
}

/** This revision's product over another's, case by case (they ran back to back): within noise of 1 is the goal. */
function revisionRatios(figures: Figures, suffix: string): Record<string, { value: Stat; target: Target }> {
  const ratios: Record<string, { value: Stat; target: Target }> = {};
  for (const n of [1, 2, 4, 'cluster3'] as const) ratios[`scale_${n}_over_scale_${n}${suffix}`] = { value: pair(figures, `scale_${n}`, `scale_${n}${suffix}`), target: undefined };
  return ratios;
}

/** `--scale` alone: each case's aggregate entries/s, Redis's and Node's CPU per entry, and the ratios. */
export function printScaleFigures(figures: Figures, load: number[][], against?: string): void {
  console.log(`\nscale-out (issue 24): median [min–max] over the repetitions; load at start ${loadText(load[0]!)}, at end ${loadText(load[1]!)}`);
  printCpuTable(figures);
  const ratios = { ...scaleRatios(figures), ...(against === undefined ? {} : { ...scaleRatios(figures, against), ...revisionRatios(figures, against) }) };
  for (const [key, { value, target }] of Object.entries(ratios)) console.log(key.padEnd(52) + shown(value).padEnd(30) + met(valueOf(value), target));
}

/** Entries/s with Redis's and Node's CPU per entry (all Node threads): where the two take turns, they add up to the wall time. */
function printCpuTable(figures: Figures, extraColumn?: { title: string; of: (runs: ScenarioResult[]) => string }): void {
  console.log('scenario'.padEnd(34) + 'entries/s'.padEnd(30) + 'Redis CPU µs/entry'.padEnd(30) + 'Node CPU µs/entry'.padEnd(30) + (extraColumn?.title ?? ''));
  for (const [name, runs] of figures) {
    const cpu = stat(runs.map((r) => r.redis?.cpuMicrosPerEntry ?? Number.NaN));
    const node = stat(runs.map((r) => r.extra?.nodeCpuMicrosPerEntry ?? Number.NaN));
    console.log(name.padEnd(34) + shown(stat(runs.map(eps))).padEnd(30) + shown(cpu).padEnd(30) + shown(node).padEnd(30) + (extraColumn?.of(runs) ?? ''));
  }
  console.log('');
}

/** `--flow`: what flow control costs (issue 27), median [min–max] over the repetitions. */
export function printFlowFigures(figures: Figures, load: number[]): void {
  console.log(`\nflow control (issue 27): median [min–max] over the repetitions; load ${loadText(load)}`);
  printCpuTable(figures, {
    title: 'parked per handled',
    of: (runs) => (runs.some((r) => r.extra?.flowParked !== undefined) ? shown(stat(runs.map((r) => (r.extra?.flowParked ?? 0) / r.entries))) : ''),
  });
  const ratios: Record<string, { value: Stat; target: Target }> = {
    product_flow_over_product_b100_300B: { value: pair(figures, 'product_flow_b100_300B', 'product_b100_300B'), target: ['>=', 0.8] },
    product_flow_strict_over_product_b100_300B: { value: pair(figures, 'product_flow_strict_b100_300B', 'product_b100_300B'), target: ['>=', 0.8] },
    product_lua_read_over_product_b100_300B: { value: pair(figures, 'product_lua_read_b100_300B', 'product_b100_300B'), target: undefined },
    // Without a target: the product over the very stream flow reads (each entry names a key), without leases.
    product_keyed_over_product_b100_300B: { value: pair(figures, 'product_keyed_b100_300B', 'product_b100_300B'), target: undefined },
    product_flow_over_product_keyed_b100_300B: { value: pair(figures, 'product_flow_b100_300B', 'product_keyed_b100_300B'), target: undefined },
    hot10_4_flow_over_hot10_4: { value: pair(figures, 'hot10_4_flow', 'hot10_4'), target: undefined },
  };
  for (const [key, { value, target }] of Object.entries(ratios)) console.log(key.padEnd(44) + shown(value).padEnd(30) + met(valueOf(value), target));
}

const shown = (v: Stat | number) => (typeof v === 'number' ? fmt(v) : `${fmt(v.median)} [${fmt(v.min)}–${fmt(v.max)}]`);
const valueOf = (v: Stat | number) => (typeof v === 'number' ? v : v.median);
const loadText = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

function met(value: number, target: Target): string {
  if (!target) return '';
  const [op, goal] = target;
  return `${op} ${goal} ${(op === '>=' ? value >= goal : value <= goal) ? 'met' : 'MISSED'}`;
}

export function report(figures: Figures, latency: ScenarioResult, context: RunContext, out: string): void {
  const rows = [...figures.entries()].map(([name, runs]) => ({
    name,
    entriesPerSec: stat(runs.map(eps)),
    roundTripsPer1000: runs[0]!.roundTrips === undefined ? null : Math.round((runs[0]!.roundTrips / runs[0]!.entries) * 10_000) / 10,
    roundTripsPerSteadyRound: runs.some((r) => r.extra?.roundTripsPerSteadyRound !== undefined)
      ? stat(runs.flatMap((r) => r.extra?.roundTripsPerSteadyRound ?? []))
      : null,
    rssPeakMiB: stat(runs.map((r) => r.rssPeakMiB)),
    nodeCpuMicrosPerEntry: runs.some((r) => r.extra?.nodeCpuMicrosPerEntry !== undefined) ? stat(runs.flatMap((r) => r.extra?.nodeCpuMicrosPerEntry ?? [])) : null,
  }));
  const ratios = ratiosOf(figures, latency, context);
  const raw = stat(runsOf(figures, 'raw_b500_300B').map(eps));
  const rawVerify = stat(runsOf(figures, 'raw_verify_b500_300B').map(eps));

  console.log(`\nsaga-streams benchmark (${context.quick ? 'quick' : 'full'}; ${context.plan.reps} repetitions; median [min–max])\n`);
  console.log('scenario'.padEnd(30) + 'entries/s'.padEnd(30) + 'RT/1000'.padEnd(10) + 'RT/steady round'.padEnd(18) + 'RSS MiB'.padEnd(9) + 'Node CPU µs/entry');
  for (const row of rows) {
    console.log(
      row.name.padEnd(30) +
        shown(row.entriesPerSec).padEnd(30) +
        String(row.roundTripsPer1000 ?? '-').padEnd(10) +
        (row.roundTripsPerSteadyRound ? shown(row.roundTripsPerSteadyRound) : '-').padEnd(18) +
        fmt(row.rssPeakMiB.median).padEnd(9) +
        (row.nodeCpuMicrosPerEntry ? fmt(row.nodeCpuMicrosPerEntry.median) : '-'),
    );
  }
  const l = latency.extra!;
  console.log(`\nlatency publish→handler (${latency.entries} samples): p50 ${fmt(l.p50!)} ms, p90 ${fmt(l.p90!)} ms, p99 ${fmt(l.p99!)} ms, max ${fmt(l.max!)} ms`);
  const ci = context.coldImport;
  console.log(
    `cold import of the built poll bundle (${ci.bundleKiB} KiB, ${ci.gzipKiB} KiB gzip): median ${fmt(ci.medianMs)} ms; ` +
      `a trivial module, spawned alternately: ${fmt(ci.baselineMedianMs)} ms (${ci.samplesMs.length} spawns each)`,
  );
  console.log(`\nraw loop b500 300 B: ${shown(raw)} entries/s; raw_verify b500: ${shown(rawVerify)} entries/s (${cpus().length} cores)`);
  console.log(`load average (1/5/15 min): start ${loadText(context.loadAtStart)}, end ${loadText(context.loadAtEnd)}; 1-min per repetition ${context.loadPerRepetition.map((x) => x[0]!.toFixed(2)).join(', ')}`);
  console.log('\n' + 'target'.padEnd(42) + 'value'.padEnd(30) + 'target');
  for (const [key, { value, target }] of Object.entries(ratios)) {
    console.log(key.padEnd(42) + shown(value).padEnd(30) + met(valueOf(value), target));
  }
  const profile = profileOf(figures);
  printProfile(profile);
  if (context.commandCosts) printCommandCosts(context.commandCosts);

  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    JSON.stringify(
      {
        mode: context.quick ? 'quick' : 'full',
        at: new Date().toISOString(),
        repetitions: context.plan.reps,
        ratios: Object.fromEntries(Object.entries(ratios).map(([k, { value }]) => [k, valueOf(value)])),
        ratioSpread: Object.fromEntries(Object.entries(ratios).map(([k, { value }]) => [k, value])),
        targets: Object.fromEntries(Object.entries(ratios).flatMap(([k, { target }]) => (target ? [[k, target.join(' ')]] : []))),
        machine: {
          cores: cpus().length,
          node: process.version,
          loadAverage: { start: context.loadAtStart, end: context.loadAtEnd, perRepetition: context.loadPerRepetition },
          rawLoopB500EntriesPerSec: raw,
          rawVerifyB500EntriesPerSec: rawVerify,
        },
        coldImport: ci,
        ...(context.commandCosts ? { commandCosts: context.commandCosts } : {}),
        scenarios: rows,
        latency: { samples: latency.entries, ...latency.extra },
        profile,
        plan: context.plan,
      },
      null,
      2,
    ),
  );
  console.log(`\nwrote ${out}`);
}
