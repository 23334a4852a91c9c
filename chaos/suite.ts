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

/**
 * The scenarios `npm test` runs. Left out until the issue-12 fixes land (each fails today,
 * strictly, on the current code — see the closing note of issue 13): proxy-stall (I6: a
 * stalled connection holds a run for the 10 s exchange timeout), handlers (I2/I1: a bad
 * return value is acked; I3: an uninspectable throw kills the process), poison (I4: markers
 * per event id hide the second group's record; duplicate fields and invalid UTF-8 are
 * handled; 4,000 fields keep only a count; I6 with 5 MiB entries).
 */
export const BOUNDED_SCENARIOS = ['crash', 'redis-kill', 'proxy-drop', 'cluster-failover', 'retention', 'inbox'] as const;

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
