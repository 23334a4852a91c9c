/**
 * Child processes of the benchmark: the scenario bundle, one child per measured run, and
 * several children started together (scale-out) behind a barrier.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { NODE_CPU_KEYS, type ScenarioResult } from './scenarios/types';

/**
 * Scenarios run from one esbuild bundle on plain node, as a deployed function would: no
 * TypeScript loader in the measured process (tsx alone adds ~35 MiB RSS and CPU).
 */
export async function bundleChild(benchDir: string): Promise<{ file: string; cleanup: () => void }> {
  // Inside the repo so the bundle's external packages resolve from node_modules.
  mkdirSync(join(benchDir, '.build'), { recursive: true });
  const dir = mkdtempSync(join(benchDir, '.build', 'child-'));
  const file = join(dir, 'child.mjs');
  await build({
    entryPoints: [join(benchDir, 'child.ts')],
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    // One chunk per scenario: a scenario's packages (BullMQ, Hono, ...) load only in the
    // child that runs it (see child.ts). Without splitting, esbuild hoists every external
    // import to the top of the one file.
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `BENCH_CHILD_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'`: node flags for every child, split on
 * spaces — a CPU profile of the measured processes (node refuses --cpu-prof in NODE_OPTIONS).
 */
function childNodeArgs(): string[] {
  return (process.env.BENCH_CHILD_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

interface Running {
  readonly ready: Promise<void>;
  readonly result: Promise<ScenarioResult>;
  go(): void;
}

function start(childFile: string, job: object): Running {
  const child = spawn(process.execPath, [...childNodeArgs(), childFile, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('READY\n')) markReady();
  });
  const result = new Promise<ScenarioResult>((resolve, reject) => {
    child.on('exit', (code) => {
      markReady(); // a child that died before its barrier must not hang the others
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || !line) return reject(new Error(`scenario ${JSON.stringify(job)} failed (exit ${code})`));
      resolve(JSON.parse(line.slice(7)) as ScenarioResult);
    });
  });
  return { ready, result, go: () => child.stdin.end('GO\n') };
}

/**
 * One child. With `atStart`, the child waits at the barrier after its warm-up, `atStart`
 * runs (the Redis snapshot), then the child starts; without it, the child starts at once.
 */
export async function runChild(childFile: string, job: object, atStart?: () => Promise<void>): Promise<ScenarioResult> {
  if (atStart === undefined) {
    const running = start(childFile, job);
    running.go(); // no barrier: the line is never read, and stdin simply closes
    return running.result;
  }
  const running = start(childFile, { ...job, barrier: true });
  await running.ready;
  await atStart();
  running.go();
  return running.result;
}

/**
 * Per-entry Node figures of processes side by side, over all their entries: the CPU all of
 * them spent divided by all the entries they handled. A process that handled none carries
 * no per-entry figure (and, on one stream shared by few processes, does not happen).
 */
function aggregateNodeCpu(results: readonly ScenarioResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  const handled = results.filter((r) => r.entries > 0);
  const entries = handled.reduce((sum, r) => sum + r.entries, 0);
  for (const key of NODE_CPU_KEYS) {
    if (entries === 0 || !handled.every((r) => r.extra?.[key] !== undefined)) continue;
    out[key] = handled.reduce((sum, r) => sum + r.extra![key]! * r.entries, 0) / entries;
  }
  return out;
}

/**
 * Starts every job, lets each warm up, then (after `atStart`, if given) releases them at
 * once; the aggregate rate is all entries over the span from the first start to the last end.
 */
export async function runSideBySide(
  childFile: string,
  jobs: readonly object[],
  atStart?: () => Promise<void>,
): Promise<{ results: ScenarioResult[]; aggregate: ScenarioResult }> {
  const running = jobs.map((job) => start(childFile, { ...job, barrier: true }));
  await Promise.all(running.map((r) => r.ready));
  await atStart?.();
  for (const r of running) r.go();
  const results = await Promise.all(running.map((r) => r.result));
  const first = Math.min(...results.map((r) => r.startedAtMs!));
  const last = Math.max(...results.map((r) => r.endedAtMs!));
  const aggregate: ScenarioResult = {
    entries: results.reduce((sum, r) => sum + r.entries, 0),
    seconds: (last - first) / 1000,
    rssPeakMiB: Math.max(...results.map((r) => r.rssPeakMiB)),
    extra: { processes: results.length, ...aggregateNodeCpu(results) },
  };
  return { results, aggregate };
}
