/**
 * The `saga-streams` executable (via bin/saga-streams.mjs, or `tsx cli/main.ts`): binds
 * runCli to the process. SIGINT/SIGTERM abort the running command, which stops cleanly;
 * another signal a second or more later exits at once.
 */
import { nodeIo } from './io';
import { runCli } from './run';

/**
 * A repeat within this window is the same Ctrl-C arriving again — the terminal signals the
 * whole process group, and wrappers (npm, tsx) relay it too — not a request to force.
 */
const REPEAT_WINDOW_MS = 1_000;

const stop = new AbortController();
let firstSignalAt = 0;
const onSignal = (signal: NodeJS.Signals) => {
  if (!stop.signal.aborted) {
    firstSignalAt = Date.now();
    stop.abort(signal);
  } else if (Date.now() - firstSignalAt > REPEAT_WINDOW_MS) {
    process.exit(130);
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

/**
 * Once the command has finished, work it abandoned (a handler past its deadline, a request
 * to a stalled Redis) must not keep the process alive: it ends on its own when nothing is
 * left, or after this grace at the latest.
 */
const EXIT_GRACE_MS = 200;

process.exitCode = await runCli(process.argv.slice(2), nodeIo(stop.signal));
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
