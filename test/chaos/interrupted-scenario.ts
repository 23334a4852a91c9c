/**
 * A chaos run cut short in the middle, for test/chaos/cleanup.test.ts: the bounded
 * `redis-kill` scenario (AOF server, restarted by its faults) which, once its poll processes
 * are up, prints `UP` and then ends as argv[2] says (argv[3]: a file the test creates once it
 * has seen what the run started; `exit` and `throw` wait for it):
 * - `wait`: runs on until the test sends SIGINT or SIGTERM;
 * - `exit`: process.exit at once, with nothing awaited;
 * - `throw`: an exception out of the scenario; once runScenario has rejected, prints
 *   `CAUGHT` and waits to be killed (the test looks before this process exits).
 */
import { existsSync } from 'node:fs';
import { bundleChild } from '../../chaos/fleet';
import { runScenario } from '../../chaos/harness';
import { SCENARIOS } from '../../chaos/scenarios';
import { BOUNDED } from '../../chaos/suite';

const mode = process.argv[2];
const goFile = process.argv[3]!;

/** Blocks (the log callback is synchronous) until the test has looked. */
function awaitGo(): void {
  const slot = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(goFile)) Atomics.wait(slot, 0, 0, 20);
}
const scenario = SCENARIOS.find((s) => s.name === 'redis-kill')!;

function log(line: string): void {
  if (!line.includes('poll processes up')) return;
  process.stdout.write('UP\n');
  if (mode === 'wait') return;
  awaitGo();
  if (mode === 'exit') process.exit(3);
  if (mode === 'throw') throw new Error('forced failure in the middle of a scenario');
}

const bundle = await bundleChild();
try {
  await runScenario(scenario, { seed: 1, sizes: BOUNDED, bundle: bundle.file, log });
} catch (error) {
  if (mode !== 'throw') throw error;
  bundle.cleanup();
  process.stdout.write('CAUGHT\n');
  setInterval(() => {}, 1_000);
}
