/**
 * The bounded chaos run (issue 13) on every `npm test`: the same harness, faults and
 * invariant checks as `npm run chaos`, with a few hundred events per scenario. Each
 * scenario must end with zero violations; a failure prints the seed that replays it
 * (`npm run chaos -- --seed N --scenario name --quick`). CHAOS_SEED fixes the seed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { stopScenarios } from '../../chaos/cleanup';
import { bundleChild, type ChildBundle } from '../../chaos/fleet';
import { runScenario } from '../../chaos/harness';
import { randomSeed } from '../../chaos/rng';
import { SCENARIOS } from '../../chaos/scenarios';
import { BOUNDED, BOUNDED_SCENARIOS } from '../../chaos/suite';

const seed = Number(process.env.CHAOS_SEED ?? randomSeed());
/** Generous: a scenario takes 8-16 s on a loaded 2-core machine; no timing is asserted but I6's. */
const SCENARIO_TIMEOUT_MS = 120_000;

describe(`chaos (bounded, seed ${seed})`, () => {
  let bundle: ChildBundle;
  beforeAll(async () => {
    // The harness reads its database from CHAOS_POSTGRES_URL: the run's server unless you name one.
    process.env.CHAOS_POSTGRES_URL ??= inject('databaseUrl');
    bundle = await bundleChild();
  });
  // A scenario this test gave up on (its timeout) goes on in the background: stop it before the next one.
  afterEach(stopScenarios);
  afterAll(() => bundle?.cleanup());

  it.each(BOUNDED_SCENARIOS.map((name) => SCENARIOS.find((s) => s.name === name)!))(
    '$name: $title — 0 invariant violations',
    async (scenario) => {
      const result = await runScenario(scenario, { seed, sizes: BOUNDED, bundle: bundle.file });
      const details = result.violationDetails.map((v) => `${v.invariant}: ${v.detail}`);
      expect({ violations: result.violations, details, replay: `${result.replay} --quick` }).toEqual({
        violations: 0,
        details: [],
        replay: `${result.replay} --quick`,
      });
      // Every event reached every group: nothing left pending once the faults stopped, and
      // every one but the poison (dead-lettered, never committed) committed by each group.
      expect(result.pending).toBe(0);
      expect(result.committed).toBe((result.published - result.poison) * result.groups);
      // `scheduled`: every scheduled event was moved in (an event still waiting is not published yet).
      expect(result.scheduled?.waiting ?? 0).toBe(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
