/**
 * A run: repeated rounds under one deadline. `drain` stops once a round finds no fresh
 * entries and the reclaim cursor has completed its pass over the PEL (cron triggers);
 * `continuous` keeps going until the deadline, waiting between empty rounds.
 *
 * When a run stops (deadline, abort signal, drained) its final settle also releases every
 * entry it claimed but never handed to a handler (SPEC §5.1 (b)), in the same round trip;
 * and it claims only as many entries as the time left can cover (SPEC §5.1 (a)).
 */
import { claimEntries } from './claim';
import type { ConsumerConfig } from './config';
import { RunDeadlineTooCloseError } from './errors';
import { boundByDeadline, DEADLINE_OVERRUN_MS } from './redis/deadline';
import { meterPort } from './redis/metered';
import { runOperations, type ScriptCall } from './redis/script';
import { releaseCall } from './release';
import { addRound, EMPTY_RUN, type RoundReport, type RunReport } from './report';
import { decideRound, releasable, roundReport, type RoundDeps } from './round';
import { RoundSizer } from './round-size';
import { NOTHING_SETTLED, settleCall, settleResultOf } from './settle';
import { asInteger } from './redis/reply';
import { noteClaimed, waitForEntries, type WakeState } from './wait';

/** Below this much handler time after the settle reserve, a run does not start. */
export const MIN_HANDLER_WINDOW_MS = 50;

export type RunMode = 'drain' | 'continuous';

export interface RunOptions {
  readonly mode: RunMode;
  /** Epoch ms; clamped to start + config.runBudgetMs so minIdle > run duration holds. */
  readonly deadline?: number;
  /** Stops the run: no handler starts after it fires; unstarted entries are released. */
  readonly signal?: AbortSignal;
  readonly onRound?: (report: RoundReport) => void;
}

/** The run's effective deadline, or RunDeadlineTooCloseError when too little time remains to start. */
export function runDeadline(config: ConsumerConfig, requested: number | undefined, startedAt: number): number {
  const deadline = Math.min(requested ?? Number.POSITIVE_INFINITY, startedAt + config.runBudgetMs);
  const required = config.settleReserveMs + MIN_HANDLER_WINDOW_MS;
  if (deadline - startedAt < required) throw new RunDeadlineTooCloseError(deadline - startedAt, required);
  return deadline;
}

export async function runPoller(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  const { config, now } = deps;
  const startedAt = now();
  const deadline = runDeadline(config, options.deadline, startedAt);
  const settleBy = deadline - config.settleReserveMs;
  // Every exchange ends by deadline + overrun, whatever Redis does (SPEC §5.1, issue 12 item 8).
  const port = meterPort(boundByDeadline(deps.port, deadline + DEADLINE_OVERRUN_MS, now));
  const sizer = new RoundSizer(config);
  const held = new Set<string>();
  const aborted = () => options.signal?.aborted === true;
  const stopping = () => aborted() || now() >= settleBy;

  const wake: WakeState = { lastSeenId: '$' };
  let total = EMPTY_RUN;
  let roundTripsBefore = 0;
  let woke = false;
  while (!stopping()) {
    const sized = sizer.plan(settleBy - now(), true);
    if (sized === undefined) break; // not even one entry fits in the time left
    const plan = woke ? { ...sized, peekLastId: true } : sized;
    const roundStart = now();
    const claim = await claimEntries(port, config, plan);
    sizer.observeExchange(now() - roundStart);

    const handlingStart = now();
    const decided = await decideRound(deps, claim.entries, deadline, held, stopping);
    sizer.observeHandling(decided.handled, now() - handlingStart);

    const freshCount = claim.entries.length - claim.reclaimed;
    const drained = options.mode === 'drain' && freshCount === 0 && claim.nextCursor === '0-0';
    const last = drained || stopping();
    const settle = settleCall(config, decided.decisions);
    const release = last ? releaseCall(config, releasable(deps, decided, held)) : undefined;
    const ops = [settle, release].filter((op): op is ScriptCall => op !== undefined);
    const replies = ops.length === 0 ? [] : await runOperations(port, ops);
    const settled = settle === undefined ? NOTHING_SETTLED : settleResultOf(replies[0]);
    const released = release === undefined ? 0 : asInteger(replies[ops.length - 1], 'release reply');

    const report = {
      ...roundReport(decided, settled, claim, port.roundTrips - roundTripsBefore, now() - roundStart, released),
      stoppedForDeadline: decided.stoppedForDeadline && !aborted(),
    };
    roundTripsBefore = port.roundTrips;
    total = addRound(total, report);
    options.onRound?.(report);
    if (last) break;

    // Fresh entries come in id order after the reclaimed ones: the last is the newest.
    noteClaimed(wake, freshCount > 0 ? claim.entries[claim.entries.length - 1]!.id : undefined, claim.streamLastId);
    woke = false;
    if (options.mode === 'continuous' && claim.entries.length === 0) {
      const waitMs = Math.min(config.blockMs, settleBy - now());
      woke = await waitForEntries(port, config.keys.stream, wake, waitMs, options.signal, config.wait);
    }
  }
  return {
    ...total,
    roundTrips: port.roundTrips,
    durationMs: now() - startedAt,
    stoppedForDeadline: total.stoppedForDeadline || (!aborted() && now() >= settleBy),
  };
}
