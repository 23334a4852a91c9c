/**
 * `npm run chaos [-- --seed N] [--scenario name[,name]] [--quick] [--out file.json]`: runs the chaos
 * scenarios (all by default) against private Redis servers, prints per scenario what was
 * published, committed, duplicated, left pending and dead-lettered, the invariant
 * violations and the worst deadline overshoot, with the seed that replays it; writes
 * chaos/results/latest.json (a full run) and exits 1 on any violation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScenarioResult } from './harness';
import { randomSeed } from './rng';
import { BOUNDED, FULL, runSuite, scenarioNames } from './suite';

const here = dirname(fileURLToPath(import.meta.url));

function argValue(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.indexOf(name);
  if (at >= 0) return args[at + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

function table(results: readonly ScenarioResult[]): string {
  const header = ['scenario', 'published', 'committed', 'dup rate', 'pending', 'DLT', 'violations', 'worst overshoot', 'faults', 'seed'];
  const rows = results.map((r) => [
    r.scenario,
    `${r.published} × ${r.groups} groups`,
    String(r.committed),
    `${(r.duplicateRate * 100).toFixed(2)} %`,
    String(r.pending),
    String(r.dltRecords),
    r.violations === 0 ? '0' : `${r.violations} (${Object.entries(r.violationsByInvariant).filter(([, n]) => n > 0).map(([i, n]) => `${i}:${n}`).join(' ')})`,
    r.worstOvershootMs === null ? '-' : `${r.worstOvershootMs} ms`,
    String(r.faults),
    String(r.seed),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const quick = process.argv.includes('--quick');
  const seed = Number(argValue('--seed') ?? randomSeed());
  const names = argValue('--scenario')?.split(',') ?? scenarioNames();
  const sizes = quick ? BOUNDED : FULL;
  const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);
  log(`seed ${seed} (replay with: npm run chaos -- --seed ${seed}${argValue('--scenario') ? ` --scenario ${names.join(',')}` : ''}${quick ? ' --quick' : ''})`);
  const started = Date.now();
  const outDir = join(here, 'results');
  mkdirSync(outDir, { recursive: true });
  // Written after every scenario, so a long run that dies still leaves what it measured.
  const save = (results: readonly ScenarioResult[]) => {
    const violations = results.reduce((sum, r) => sum + r.violations, 0);
    const summary = { when: new Date().toISOString(), seed, quick, sizes, durationMs: Date.now() - started, violations, results };
    writeFileSync(argValue('--out') ?? join(outDir, quick ? 'quick.json' : 'latest.json'), `${JSON.stringify(summary, null, 2)}\n`);
  };
  const results = await runSuite(names, seed, sizes, log, save);
  console.log(table(results));
  for (const result of results) {
    for (const violation of result.violationDetails) console.log(`  ${result.scenario} ${violation.invariant}: ${violation.detail}`);
  }
  const total = results.reduce((sum, r) => sum + r.violations, 0);
  console.log(`${total === 0 ? 'OK' : 'FAILED'}: ${total} invariant violations in ${results.length} scenarios, seed ${seed}, ${Math.round((Date.now() - started) / 1000)} s`);
  return total === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
