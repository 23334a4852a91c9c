/**
 * A run: repeated rounds under one deadline. `drain` stops once a round finds no fresh
 * entries and the reclaim cursor has completed its pass over the PEL (cron triggers);
 * `continuous` keeps going until the deadline, waiting between empty rounds.
 *
 * Rounds overlap (SPEC §5.1 "Overlapped rounds"): the settle of round N and the claim of
 * round N+1 go in one round trip, so a steady round costs one. The rules that keep this
 * safe: (a) a claim asks only for what the time left covers (RoundSizer); (b) when the run
 * stops (deadline, abort signal, drained, or a settle that failed beside a claim) its final
 * round trip releases every entry it claimed but never handed to a handler; (c) an ordering
 * key with a retained entry holds the key's later entries for the rest of the run
 * (decideRound); (d) the claim of N+1 is sent only after round N is fully decided, so a
 * crash leaves exactly what a crash without overlap leaves: entries pending until minIdle.
 * Nothing is acked that a handler did not commit: settle only carries decided verdicts.
 */
import { claimEntries, claimOperations, claimResultOf, type ClaimPlan, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import type { StreamEntry } from './entry';
import { RedisCommandError, RunDeadlineTooCloseError } from './ground/errors';
import { boundByDeadline, DEADLINE_OVERRUN_MS } from './redis/deadline';
import { meterPort } from './redis/metered';
import type { RedisPort, RedisReply } from './redis/port';
import { asInteger } from './redis/reply';
import { runOperations, runOperationsSettled, throwIfError, type ScriptCall } from './redis/script';
import { releaseCall } from './release';
import { addRound, EMPTY_RUN, type RoundReport, type RunReport } from './report';
import { consumerScope, decideRound, releasable, roundReport, type RoundDeps } from './round';
import { RoundSizer } from './round-size';
import { NOTHING_SETTLED, settleCall, settleResultOf, type SettleResult } from './settle';
import { traceRun } from './telemetry/tracing';
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

/**
 * Reclaim cadence (SPEC §5.1): XAUTOCLAIM runs on a run's first claim, after any fresh read
 * that came back short, and at least every `every` claims; claims that fresh entries fill
 * skip it (it rescans up to COUNT × 10 PEL entries, and the PEL holds up to two batches).
 */
class ReclaimCadence {
  #due = true;
  #skipped = 0;

  constructor(private readonly every: number) {}

  due(): boolean {
    return this.#due || this.#skipped + 1 >= this.every;
  }

  claimed(plan: ClaimPlan, claim: ClaimResult): void {
    this.#skipped = plan.reclaim > 0 ? 0 : this.#skipped + 1;
    this.#due = claim.entries.length - claim.reclaimed < claim.freshRequested;
  }
}

/** A run, inside its `poll <stream>` trace span when an OpenTelemetry SDK is registered. */
export function runPoller(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  return traceRun(consumerScope(deps.config), options.mode, () => runRounds(deps, options));
}

async function runRounds(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  const { config, now } = deps;
  const startedAt = now();
  const deadline = runDeadline(config, options.deadline, startedAt);
  const settleBy = deadline - config.settleReserveMs;
  // Every exchange ends by deadline + overrun, whatever Redis does (issue 12 item 8).
  const port = meterPort(boundByDeadline(deps.port, deadline + DEADLINE_OVERRUN_MS, now));
  const sizer = new RoundSizer(config);
  const cadence = new ReclaimCadence(config.reclaimEveryRounds);
  const held = new Set<string>();
  const wake: WakeState = { lastSeenId: '$' };
  const aborted = () => options.signal?.aborted === true;
  const stopping = () => aborted() || now() >= settleBy;
  let woke = false;

  const nextPlan = (): ClaimPlan | undefined => {
    if (stopping()) return undefined;
    const sized = sizer.plan(settleBy - now(), cadence.due());
    return sized !== undefined && woke ? { ...sized, peekLastId: true } : sized;
  };
  const claimed = (plan: ClaimPlan, claim: ClaimResult): ClaimResult => {
    cadence.claimed(plan, claim);
    sizer.observeEntries(claim.entries.length, claim.bytes);
    const freshCount = claim.entries.length - claim.reclaimed;
    // Fresh entries come in id order after the reclaimed ones: the last is the newest.
    noteClaimed(wake, freshCount > 0 ? claim.entries[claim.entries.length - 1]!.id : undefined, claim.streamLastId);
    woke = false;
    return claim;
  };
  const exchange = async <T>(send: () => Promise<T>): Promise<T> => {
    const sentAt = now();
    const result = await send();
    sizer.observeExchange(now() - sentAt);
    return result;
  };

  let total = EMPTY_RUN;
  let roundTripsBefore = 0;
  let roundStart = now();
  const firstPlan = nextPlan();
  let claim = firstPlan && claimed(firstPlan, await exchange(() => claimEntries(port, config, firstPlan)));
  while (claim !== undefined) {
    const handlingStart = now();
    const decided = await decideRound(deps, claim.entries, deadline, held, stopping);
    sizer.observeHandling(decided.handled, now() - handlingStart);

    const freshCount = claim.entries.length - claim.reclaimed;
    const drained = options.mode === 'drain' && freshCount === 0 && claim.nextCursor === '0-0';
    const idle = options.mode === 'continuous' && claim.entries.length === 0;
    const next = drained || idle ? undefined : nextPlan();
    const settle = settleCall(config, decided.decisions);

    let settled = NOTHING_SETTLED;
    let released = 0;
    let nextClaim: ClaimResult | undefined;
    if (next !== undefined) {
      // Steady state: this round's settle and the next round's claim in one round trip.
      const [settledNow, claimNow] = await exchange(() => settleAndClaim(port, config, settle, next, held, deps));
      settled = settledNow;
      nextClaim = claimed(next, claimNow);
    } else if (!idle) {
      // The run stops here: settle, and give back what no handler saw, in one round trip.
      const release = releaseCall(config, releasable(deps, decided, held));
      const ops = [settle, release].filter((op): op is ScriptCall => op !== undefined);
      const replies = ops.length === 0 ? [] : await exchange(() => runOperations(port, ops));
      if (settle !== undefined) settled = settleResultOf(replies[0]);
      if (release !== undefined) released = asInteger(replies[ops.length - 1], 'release reply');
    }

    const report = {
      ...roundReport(decided, settled, claim, port.roundTrips - roundTripsBefore, now() - roundStart, released),
      stoppedForDeadline: decided.stoppedForDeadline && !aborted(),
    };
    roundTripsBefore = port.roundTrips;
    roundStart = now();
    total = addRound(total, report);
    options.onRound?.(report);

    if (idle && !stopping()) {
      // Nothing claimed (so nothing to settle): wait for entries, then claim on its own.
      const waitMs = Math.min(config.blockMs, settleBy - now());
      woke = await waitForEntries(port, config.keys.stream, wake, waitMs, options.signal, config.wait);
      const plan = nextPlan();
      nextClaim = plan && claimed(plan, await exchange(() => claimEntries(port, config, plan)));
    }
    claim = nextClaim;
  }
  return {
    ...total,
    roundTrips: port.roundTrips,
    durationMs: now() - startedAt,
    stoppedForDeadline: total.stoppedForDeadline || (!aborted() && now() >= settleBy),
  };
}

/**
 * One round trip: the settle of the round just decided, then the next claim. When the
 * settle fails but the claim went through, the claimed entries (none started) are released
 * at once before the error is thrown, so a failing settle strands nothing until minIdle.
 */
async function settleAndClaim(
  port: RedisPort,
  config: ConsumerConfig,
  settle: ScriptCall | undefined,
  plan: ClaimPlan,
  held: ReadonlySet<string>,
  deps: RoundDeps,
): Promise<[SettleResult, ClaimResult]> {
  const ops = claimOperations(config, plan);
  const replies = await runOperationsSettled(port, settle === undefined ? ops : [settle, ...ops]);
  const claimReplies = settle === undefined ? replies : replies.slice(1);
  const settleReply = settle === undefined ? undefined : replies[0];
  if (settleReply instanceof RedisCommandError) {
    if (!claimReplies.some((reply) => reply instanceof RedisCommandError)) {
      const stranded = claimResultOf(plan, claimReplies as RedisReply[]).entries;
      await releaseQuietly(port, config, stranded.filter((entry) => !isHeld(deps, held, entry)));
    }
    throw settleReply;
  }
  return [settleResultOf(settleReply), claimResultOf(plan, claimReplies.map(throwIfError))];
}

function isHeld(deps: RoundDeps, held: ReadonlySet<string>, entry: StreamEntry): boolean {
  const key = deps.orderingKey?.(entry);
  return key !== undefined && held.has(key);
}

/** Best effort: the run is failing already, and the caller must see the original error. */
async function releaseQuietly(port: RedisPort, config: ConsumerConfig, entries: readonly StreamEntry[]): Promise<void> {
  const release = releaseCall(config, entries);
  if (release !== undefined) await runOperations(port, [release]).catch(() => {});
}

