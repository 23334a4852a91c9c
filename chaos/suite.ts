/** Runs a list of scenarios with one seed and one size plan; shared by `npm run chaos` and the bounded test. */
import { bundleChild } from './fleet';
import { runScenario, type ScenarioResult, type Sizes } from './harness';
import { SCENARIOS } from './scenarios';

export const FULL: Sizes = {
  events: 20_000,
  publishPerSecond: 1_000,
  drainTimeoutMs: 90_000,
  ledgerSync: 'fsync',
  poisonRounds: 3,
  bigPoison: true,
  scale: 0,
  faultWindowMs: 0,
};

/** Small enough for `npm test` on a loaded 2-core machine; the same faults and checks. */
export const BOUNDED: Sizes = {
  events: 200,
  publishPerSecond: 100,
  drainTimeoutMs: 30_000,
  ledgerSync: 'write',
  poisonRounds: 1,
  bigPoison: true,
  scale: -1,
  faultWindowMs: 3_000,
};

/** The scenarios `npm test` runs: every one, with the BOUNDED sizes. */
export const BOUNDED_SCENARIOS = [
  'crash',
  'redis-kill',
  'proxy-drop',
  'proxy-stall',
  'proxy-long-stall',
  'cluster-failover',
  'handlers',
  'poison',
  'retention',
  'scheduled',
  'flow-control',
  'inbox',
] as const;

export function scenarioNames(): string[] {
  return SCENARIOS.map((s) => s.name);
}

export async function runSuite(
  names: readonly string[],
  seed: number,
  sizes: Sizes,
  log?: (line: string) => void,
  onResult?: (results: readonly ScenarioResult[]) => void,
): Promise<ScenarioResult[]> {
  const unknown = names.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')} (known: ${scenarioNames().join(', ')})`);
  const bundle = await bundleChild();
  try {
    const results: ScenarioResult[] = [];
    for (const name of names) {
      const def = SCENARIOS.find((s) => s.name === name)!;
      log?.(`[${name}] seed ${seed}: ${def.title}`);
      results.push(await runScenario(def, { seed, sizes, bundle: bundle.file, log }));
      onResult?.(results);
    }
    return results;
  } finally {
    bundle.cleanup();
  }
}
