/**
 * What a caller asks of one run (SPEC §5.1). Apart from run.ts, which starts runs, so the
 * loop that carries them out (run-loop.ts) reads them without importing the module that
 * imports it.
 */
import type { RoundReport } from './report';

export type RunMode = 'drain' | 'continuous';

export interface RunOptions {
  readonly mode: RunMode;
  /** Epoch ms; clamped to start + config.runBudgetMs so minIdle > run duration holds. */
  readonly deadline?: number;
  /** Stops the run: no handler starts after it fires, a blocking wait ends at once; unstarted entries are released. */
  readonly signal?: AbortSignal;
  /** Called with each round's report once its settle was answered. A hook that throws stops the run (after its final settle). */
  readonly onRound?: (report: RoundReport) => void;
  /** Ends the run after this many rounds (1: one claim, handled and settled). */
  readonly maxRounds?: number;
}
