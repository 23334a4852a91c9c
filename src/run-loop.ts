/**
 * The rounds of one run, overlapped (SPEC §5.1 "Overlapped rounds"). While round N is
 * handled, one exchange beside it carries the settle of round N−1 and the claim of round
 * N+1, so Redis works while Node handles, and a steady round costs one round trip.
 *
 * The rules that keep this safe:
 * (a) a claim asks only for what the time left covers once the round in hand is handled
 *     (RoundSizer, `ahead`), and none goes out beside a round before a round was handled
 *     (in this run, or the previous one of the process on this stream and group: until
 *     then nothing says how long a round takes);
 * (b) when the run stops (deadline, abort signal, drained, a failed exchange) its final
 *     round trip releases every entry it claimed but never handed to a handler: the
 *     unstarted entries of the last round and the whole batch claimed beside it;
 * (c) round N+1 starts only once every verdict of round N is in, and an ordering key with a
 *     retained entry (failed, timed out — maybe still running — or itself held) holds the
 *     key's later entries for the rest of the run (decideRound), so no entry starts before
 *     an earlier one of its key has finished; held entries are never released either;
 * (d) a crash leaves entries pending exactly as without overlap (reclaimed after minIdle).
 * Nothing is acked that a handler did not commit: a settle only carries decided verdicts.
 *
 * A round's report is emitted once its settle has been answered (in the exchange beside the
 * next round, or in the final one); its round trips are the exchanges since the previous
 * report.
 */
import { claimedDespiteErrors, claimOperations, claimResultOf, type ClaimPlan, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import type { StreamEntry } from './entry';
import { probeCommand, probedEntryBytes } from './entry-size';
import { remember, remembered } from './run-memory';
import { RedisCommandError } from './ground/errors';
import { ReclaimCadence } from './reclaim-cadence';
import { boundByDeadline, DEADLINE_OVERRUN_MS } from './redis/deadline';
import { meterPort, type MeteredPort } from './redis/metered';
import type { RedisPort, RedisReply } from './redis/port';
import { asInteger } from './redis/reply';
import { runOperations, runOperationsSettled, throwIfError, type Operation, type ScriptCall } from './redis/script';
import { releaseCall } from './release';
import { addRound, EMPTY_RUN, type RoundReport, type RunReport } from './report';
import { decideRound, releasable, roundReport, type DecidedRound, type RoundDeps } from './round';
import { RoundSizer } from './round-size';
import type { RunOptions } from './run';
import { NOTHING_SETTLED, settleCall, settleResultOf, type SettleResult } from './settle';
import { sleep } from './wait';

/**
 * A round handled and decided whose settle has not been answered yet. It keeps counts and
 * the settle call (ids), never the entries: a round carried beside the next one would
 * otherwise keep two batches of entries alive, and promote them to the old generation.
 */
interface Unsettled {
  /** The round's report as far as its claim and verdicts tell; settle counts, round trips and duration come at emit. */
  readonly tally: RoundReport;
  readonly settle: ScriptCall | undefined;
  readonly startedAt: number;
}

/** Where the loop goes next: the claim to handle (none: the run is over) and the round whose settle is still to send. */
interface Step {
  readonly claim: ClaimResult | undefined;
  readonly carried: Unsettled | undefined;
}

const DONE: Step = { claim: undefined, carried: undefined };

/** The exchange sent beside a round's handling. It never rejects: nothing may go unhandled while handlers run. */
type Beside = { readonly replies: Array<RedisReply | RedisCommandError> } | { readonly error: unknown };

const NOTHING_DECIDED: DecidedRound = Object.freeze({
  decisions: [],
  handled: 0,
  handlerMicrosSum: 0,
  stoppedForDeadline: false,
  started: new Set<StreamEntry>(),
});

export class RunLoop {
  readonly #deps: RoundDeps;
  readonly #options: RunOptions;
  readonly #config: ConsumerConfig;
  readonly #port: MeteredPort;
  readonly #sizer: RoundSizer;
  readonly #cadence: ReclaimCadence;
  /** Ordering keys with a retained entry in this run (see decideRound). */
  readonly #held = new Set<string>();
  readonly #deadline: number;
  readonly #settleBy: number;
  readonly #startedAt: number;
  #total = EMPTY_RUN;
  /** port.roundTrips when the last round was reported. */
  #reportedRoundTrips = 0;

  constructor(deps: RoundDeps, options: RunOptions, startedAt: number, deadline: number) {
    this.#deps = deps;
    this.#options = options;
    this.#config = deps.config;
    this.#startedAt = startedAt;
    this.#deadline = deadline;
    this.#settleBy = deadline - deps.config.settleReserveMs;
    // Every exchange ends by deadline + overrun, whatever Redis does (issue 12 item 8).
    this.#port = meterPort(boundByDeadline(deps.port, deadline + DEADLINE_OVERRUN_MS, deps.now));
    this.#sizer = new RoundSizer(deps.config, remembered(deps.config.keys.stream, deps.config.group));
    this.#cadence = new ReclaimCadence(deps.config.reclaimEveryRounds);
  }

  async run(): Promise<RunReport> {
    let step: Step = { claim: await this.#firstClaim(), carried: undefined };
    while (step.claim !== undefined) {
      const { claim, carried } = step;
      const idle = this.#options.mode === 'continuous' && claim.entries.length === 0;
      step = idle ? await this.#idle(claim, carried) : await this.#round(claim, carried);
    }
    remember(this.#config.keys.stream, this.#config.group, this.#sizer.observed());
    const now = this.#deps.now();
    return {
      ...this.#total,
      roundTrips: this.#port.roundTrips,
      durationMs: now - this.#startedAt,
      stoppedForDeadline: this.#total.stoppedForDeadline || (!this.#aborted() && now >= this.#settleBy),
    };
  }

  readonly #aborted = (): boolean => this.#options.signal?.aborted === true;
  readonly #stopping = (): boolean => this.#aborted() || this.#deps.now() >= this.#settleBy;

  /** Handles one claim while the exchange beside it settles the previous round and claims the next. */
  async #round(claim: ClaimResult, carried: Unsettled | undefined): Promise<Step> {
    const startedAt = this.#deps.now();
    const plan = this.#aheadPlan(claim);
    const ops: Operation[] = [];
    if (carried?.settle !== undefined) ops.push(carried.settle);
    if (plan !== undefined) ops.push(...claimOperations(this.#config, plan));
    const beside = ops.length === 0 ? undefined : this.#sendBeside(ops);
    // ioredis writes a pipeline to its socket at once; fetch (REST) needs the event loop to
    // get the request out, and handlers that never yield to it would hold it back until the
    // round is over — no overlap at all.
    if (beside !== undefined && this.#port.transport !== 'tcp') await yieldToEventLoop();

    let decided: DecidedRound;
    try {
      decided = await decideRound(this.#deps, claim.entries, this.#deadline, this.#held, this.#stopping);
    } catch (error) {
      return this.#abandon(beside, plan, error);
    }
    this.#sizer.observeHandling(decided.handled, this.#deps.now() - startedAt);
    const current: Unsettled = { tally: tallyOf(decided, claim), settle: settleCall(this.#config, decided.decisions), startedAt };
    const ahead = await this.#land(beside, carried, plan, current, decided);

    if (this.#drained(claim) || this.#stopping()) return this.#finish(current, decided, ahead);
    if (ahead !== undefined) return { claim: ahead, carried: current };
    if (this.#waitsInRead() && isShort(claim)) return this.#idle(undefined, current);
    // Nothing was claimed beside this round: settle it and claim the next in one round trip.
    const next = this.#plan(0);
    if (next === undefined) return this.#finish(current, decided, undefined);
    const [settled, nextClaim] = await this.#exchange(() =>
      settleAndClaim(this.#port, this.#config, current.settle, next, (entries) => this.#unheld(entries)),
    );
    this.#emit(current, settled);
    return { claim: this.#claimed(next, nextClaim), carried: undefined };
  }

  /**
   * The claim to send beside handling `claim`, if one may go (rule (a)). A continuous run
   * that waits in its read claims ahead only after a full batch: after a short one nothing
   * more is likely waiting, and the next exchange — settle, reclaim and a blocking read —
   * both finds what came meanwhile at once and waits for more, in one round trip per round.
   */
  #aheadPlan(claim: ClaimResult): ClaimPlan | undefined {
    if (!this.#sizer.mayClaimAhead() || this.#drained(claim)) return undefined;
    if (this.#waitsInRead() && isShort(claim)) return undefined;
    return this.#plan(claim.entries.length);
  }

  /** The next claim, sized by time and bytes, after `ahead` entries still to handle; undefined once the run stops. */
  #plan(ahead: number): ClaimPlan | undefined {
    if (this.#stopping()) return undefined;
    return this.#sizer.plan(this.#settleBy - this.#deps.now(), this.#cadence.due(), ahead);
  }

  #drained(claim: ClaimResult): boolean {
    const fresh = claim.entries.length - claim.reclaimed;
    return this.#options.mode === 'drain' && fresh === 0 && claim.nextCursor === '0-0';
  }

  #sendBeside(ops: readonly Operation[]): Promise<Beside> {
    return runOperationsSettled(this.#port, ops).then(
      (replies) => ({ replies }),
      (error: unknown) => ({ error }),
    );
  }

  /**
   * The answer of the exchange beside a round: reports the previous round and returns the
   * claim made ahead. On any failure the run stops: it settles the round just handled and
   * releases what it never started (best effort), then throws the failure.
   */
  async #land(
    beside: Promise<Beside> | undefined,
    carried: Unsettled | undefined,
    plan: ClaimPlan | undefined,
    current: Unsettled,
    decided: DecidedRound,
  ): Promise<ClaimResult | undefined> {
    if (beside === undefined) {
      if (carried !== undefined) this.#emit(carried, NOTHING_SETTLED);
      return undefined;
    }
    const outcome = await beside;
    if ('error' in outcome) return this.#fail(current, decided, [], outcome.error);
    const settleSlots = carried?.settle === undefined ? 0 : 1;
    const settleReply = settleSlots === 0 ? undefined : outcome.replies[0];
    let ahead: ClaimResult | undefined;
    let claimError: unknown;
    if (plan !== undefined) {
      try {
        ahead = claimResultOf(plan, outcome.replies.slice(settleSlots).map(throwIfError));
      } catch (error) {
        claimError = error;
      }
    }
    const claimedAhead = () => ahead?.entries ?? (plan === undefined ? [] : claimedDespiteErrors(plan, outcome.replies.slice(settleSlots)));
    if (settleReply instanceof RedisCommandError) return this.#fail(current, decided, claimedAhead(), settleReply);
    if (carried !== undefined) this.#emit(carried, settleResultOf(settleReply));
    if (claimError !== undefined) return this.#fail(current, decided, claimedAhead(), claimError);
    return plan !== undefined && ahead !== undefined ? this.#claimed(plan, ahead) : undefined;
  }

  /** Nothing claimed: settle what is carried, then wait for entries (blocking read on TCP, a timer on REST). */
  async #idle(claim: ClaimResult | undefined, carried: Unsettled | undefined): Promise<Step> {
    const empty: Unsettled | undefined = claim && { tally: tallyOf(NOTHING_DECIDED, claim), settle: undefined, startedAt: this.#deps.now() };
    const waitMs = Math.min(this.#config.blockMs, this.#settleBy - this.#deps.now());
    const plan = waitMs > 0 ? this.#plan(0) : undefined;
    if (plan === undefined) {
      // A carried round has nothing to release: it was not stopping when it was decided, so
      // every entry it did not start is held behind its ordering key.
      if (carried !== undefined) await this.#finish(carried, undefined, undefined);
      if (empty !== undefined) this.#emit(empty, NOTHING_SETTLED);
      return DONE;
    }
    if (this.#waitsInRead()) return this.#waitInRead(empty, carried, { ...plan, blockMs: waitMs });
    if (carried !== undefined) {
      const replies = carried.settle === undefined ? [] : await this.#exchange(() => runOperations(this.#port, [carried.settle!]));
      this.#emit(carried, settleResultOf(replies[0]));
    }
    if (empty !== undefined) this.#emit(empty, NOTHING_SETTLED);
    await sleep(waitMs, this.#options.signal);
    return { claim: await this.#claimNow(), carried: undefined };
  }

  /** Continuous mode over TCP waits inside its fresh read (config `wait`, default `block`). */
  #waitsInRead(): boolean {
    const strategy = this.#config.wait ?? (this.#port.transport === 'tcp' ? 'block' : 'sleep');
    return this.#options.mode === 'continuous' && strategy === 'block' && this.#port.transport === 'tcp';
  }

  /**
   * One round trip: the carried settle, the reclaim when the cadence asks for it, and a
   * fresh read that blocks until an entry is appended (it comes back in this reply) or the
   * wait is over. Entries reclaimed here wait for the reply too — at most blockMs, on
   * entries that sat idle for minIdle already.
   */
  async #waitInRead(empty: Unsettled | undefined, carried: Unsettled | undefined, wait: ClaimPlan): Promise<Step> {
    const settle = carried?.settle;
    const settleSlots = settle === undefined ? 0 : 1;
    const replies = await runOperationsSettled(this.#port, [...(settle === undefined ? [] : [settle]), ...claimOperations(this.#config, wait)]);
    const claimReplies = replies.slice(settleSlots);
    const readError = claimReplies.find((reply) => reply instanceof RedisCommandError);
    const woken = readError === undefined ? claimResultOf(wait, claimReplies as RedisReply[]) : undefined;
    const claimed = () => woken?.entries ?? claimedDespiteErrors(wait, claimReplies);
    if (settle !== undefined && replies[0] instanceof RedisCommandError) {
      await releaseQuietly(this.#port, this.#config, this.#unheld(claimed()));
      throw replies[0];
    }
    if (carried !== undefined) this.#emit(carried, settleResultOf(settle === undefined ? undefined : throwIfError(replies[0]!)));
    if (empty !== undefined) this.#emit(empty, NOTHING_SETTLED);
    if (woken === undefined) {
      // The reclaim may have gone through beside a failed read: give those entries back.
      await releaseQuietly(this.#port, this.#config, this.#unheld(claimed()));
      throw readError;
    }
    // Nothing came: the loop waits again (the next wait reclaims, its fresh read came back short).
    return { claim: this.#claimed(wait, woken), carried: undefined };
  }

  async #firstClaim(): Promise<ClaimResult | undefined> {
    if (this.#sizer.assumptionLimits() && !this.#stopping()) {
      const [reply] = await this.#exchange(() => runOperations(this.#port, [probeCommand(this.#config.keys.stream)]));
      const bytes = probedEntryBytes(reply ?? null);
      if (bytes !== undefined) this.#sizer.assumeEntryBytes(bytes);
    }
    return this.#claimNow();
  }

  async #claimNow(): Promise<ClaimResult | undefined> {
    const plan = this.#plan(0);
    if (plan === undefined) return undefined;
    // Through settleAndClaim (with nothing to settle): a half-failed claim gives back what it took.
    const [, claim] = await this.#exchange(() => settleAndClaim(this.#port, this.#config, undefined, plan, (entries) => this.#unheld(entries)));
    return this.#claimed(plan, claim);
  }

  #claimed(plan: ClaimPlan, claim: ClaimResult): ClaimResult {
    this.#cadence.claimed(plan, claim);
    this.#sizer.observeEntries(claim.entries.length, claim.bytes);
    return claim;
  }

  async #exchange<T>(send: () => Promise<T>): Promise<T> {
    const sentAt = this.#deps.now();
    const result = await send();
    this.#sizer.observeExchange(this.#deps.now() - sentAt);
    return result;
  }

  /** The run stops: settle the last round and give back, in one round trip, what no handler saw. */
  async #finish(current: Unsettled, decided: DecidedRound | undefined, ahead: ClaimResult | undefined): Promise<Step> {
    const release = releaseCall(this.#config, this.#unstarted(decided, ahead));
    const ops = [current.settle, release].filter((op): op is ScriptCall => op !== undefined);
    const replies = ops.length === 0 ? [] : await this.#exchange(() => runOperations(this.#port, ops));
    const settled = current.settle === undefined ? NOTHING_SETTLED : settleResultOf(replies[0]);
    const released = release === undefined ? 0 : asInteger(replies[ops.length - 1], 'release reply');
    this.#emit(current, settled, released, ahead);
    return DONE;
  }

  /** A failed exchange stops the run: what can still be settled and released is (best effort), then the failure is thrown. */
  async #fail(current: Unsettled, decided: DecidedRound, aheadEntries: readonly StreamEntry[], error: unknown): Promise<never> {
    const release = releaseCall(this.#config, [...releasable(this.#deps, decided, this.#held), ...this.#unheld(aheadEntries)]);
    const ops = [current.settle, release].filter((op): op is ScriptCall => op !== undefined);
    if (ops.length > 0) await runOperations(this.#port, ops).catch(() => {});
    throw error;
  }

  /** Entries claimed and never handed to a handler that the run may give back (not behind a held key). */
  #unstarted(decided: DecidedRound | undefined, ahead: ClaimResult | undefined): StreamEntry[] {
    const unstarted = decided === undefined ? [] : releasable(this.#deps, decided, this.#held);
    return ahead === undefined ? unstarted : [...unstarted, ...this.#unheld(ahead.entries)];
  }

  #unheld(entries: readonly StreamEntry[]): StreamEntry[] {
    const keyOf = this.#deps.orderingKey;
    if (keyOf === undefined || this.#held.size === 0) return [...entries];
    return entries.filter((entry) => {
      try {
        const key = keyOf(entry);
        return key === undefined || !this.#held.has(key);
      } catch {
        // A key that cannot be computed might be a held one: keep the entry, as if held.
        return false;
      }
    });
  }

  /**
   * The round could not be decided (a user `orderingKey` threw): no verdict is known, so the
   * round's entries stay pending as retained ones would. The exchange beside it already went
   * out; the batch it claimed ahead was never started, so it is released (rule (b)) before
   * the failure is thrown.
   */
  async #abandon(beside: Promise<Beside> | undefined, plan: ClaimPlan | undefined, error: unknown): Promise<never> {
    const outcome = beside === undefined ? undefined : await beside;
    if (outcome !== undefined && 'replies' in outcome && plan !== undefined) {
      const settleSlots = outcome.replies.length - claimOperations(this.#config, plan).length;
      await releaseQuietly(this.#port, this.#config, this.#unheld(claimedDespiteErrors(plan, outcome.replies.slice(settleSlots))));
    }
    throw error;
  }

  #emit(round: Unsettled, settled: SettleResult, released = 0, ahead?: ClaimResult): void {
    const { tally } = round;
    const report: RoundReport = {
      ...tally,
      acked: settled.acked,
      deadLettered: settled.deadLetterRecords,
      markerHits: settled.markerHits,
      released,
      // A batch claimed ahead and released unstarted still counts for what XAUTOCLAIM did to the PEL.
      reclaimed: tally.reclaimed + (ahead?.reclaimed ?? 0),
      deletedPending: tally.deletedPending + (ahead?.deletedIds.length ?? 0),
      roundTrips: this.#port.roundTrips - this.#reportedRoundTrips,
      durationMs: this.#deps.now() - round.startedAt,
      stoppedForDeadline: tally.stoppedForDeadline && !this.#aborted(),
    };
    this.#reportedRoundTrips = this.#port.roundTrips;
    this.#total = addRound(this.#total, report);
    this.#options.onRound?.(report);
  }
}

/** A fresh read that returned fewer entries than it asked for: the stream had no more for this group. */
function isShort(claim: ClaimResult): boolean {
  return claim.entries.length - claim.reclaimed < claim.freshRequested;
}

/** What a round's report says before its settle is answered. */
function tallyOf(decided: DecidedRound, claim: ClaimResult): RoundReport {
  return roundReport(decided, NOTHING_SETTLED, claim, 0, 0);
}

/** One turn of the event loop (setImmediate where the runtime has it: Workers may not). */
function yieldToEventLoop(): Promise<void> {
  const later: (callback: () => void) => unknown = globalThis.setImmediate ?? ((callback) => setTimeout(callback, 0));
  return new Promise((resolve) => later(resolve));
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
  unheld: (entries: readonly StreamEntry[]) => StreamEntry[],
): Promise<[SettleResult, ClaimResult]> {
  const ops = claimOperations(config, plan);
  const replies = await runOperationsSettled(port, settle === undefined ? ops : [settle, ...ops]);
  const claimReplies = settle === undefined ? replies : replies.slice(1);
  const settleReply = settle === undefined ? undefined : replies[0];
  const claimError = claimReplies.find((reply) => reply instanceof RedisCommandError);
  if (settleReply instanceof RedisCommandError || claimError !== undefined) {
    // Whatever part of the claim went through was never started: give it back.
    await releaseQuietly(port, config, unheld(claimedDespiteErrors(plan, claimReplies)));
    throw settleReply instanceof RedisCommandError ? settleReply : claimError;
  }
  return [settleResultOf(settleReply), claimResultOf(plan, claimReplies as RedisReply[])];
}

/** Best effort: the run is failing already, and the caller must see the original error. */
async function releaseQuietly(port: RedisPort, config: ConsumerConfig, entries: readonly StreamEntry[]): Promise<void> {
  const release = releaseCall(config, entries);
  if (release !== undefined) await runOperations(port, [release]).catch(() => {});
}
