/**
 * The `saga-streams` executable (via bin/saga-streams.mjs, or `tsx cli/main.ts`): binds
 * runCli to the process. SIGINT/SIGTERM abort the running command, which stops cleanly;
 * a second signal exits at once.
 */
import { nodeIo } from './io';
import { runCli } from './run';

const stop = new AbortController();
const onSignal = (signal: NodeJS.Signals) => {
  if (stop.signal.aborted) process.exit(130);
  stop.abort(signal);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

process.exitCode = await runCli(process.argv.slice(2), nodeIo(stop.signal));
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
