/**
 * The rounds of one run, overlapped (SPEC §5.1 "Overlapped rounds"), around one stop path.
 *
 * While round N is handled, one exchange beside it carries the settle of round N−1 and the
 * claim of round N+1, so Redis works while Node handles, and a steady round costs one round
 * trip. Over TCP that exchange goes out as soon as round N−1 is decided (`#settling`), behind
 * the exchange still out beside N−1 on the same connection: Redis settles and claims while
 * Node lands that exchange's answer, instead of waiting for the next request (a run over TCP
 * otherwise left Redis idle while it parsed each claim). When no claim may go out then, a
 * flow run still sends the settle on its own (its lease work is several times a plain
 * settle's), and others carry it into the next round's exchange. Every exchange goes
 * through one codec (exchange.ts): what was sent, and what came back part by part —
 * settled, claimed, taken despite an error.
 *
 * The state a stop needs is kept in fields as the run goes, never worked out again: the
 * round whose settle is not answered yet (`#carried`), the round just decided (`#current`),
 * the batch claimed ahead (`#ahead`) and, when the run stops between two exchanges sent
 * early, the one claimed after it (`#later`), entries a failed claim took all the same
 * (`#taken`), and the entries held behind ordering keys (`#heldEntries`). Every ending —
 * drained, deadline, abort, a Redis failure, user code failing — leaves the loop and goes through
 * `#finish()`, which in one last round trip (under its own short bound) settles what
 * committed, releases what never started and puts back what is held, and only then returns
 * the report or throws with it.
 *
 * The rules that keep the overlap safe:
 * (a) a claim asks only for what the time left covers once the rounds before it are handled
 *     (RoundSizer, `ahead`), and none goes out beside a round before a round was handled;
 *     one sent early counts the batch still out before it at its asked-for size (what a
 *     probe still out may reclaim included);
 * (b) when the run stops, every entry it claimed but never handed to a handler is released
 *     (idle minIdle, delivery count restored), unless it is held (c);
 * (c) round N+1 starts only once every verdict of round N is in, and an ordering key with a
 *     retained entry holds the key's later entries for the rest of the run: they are never
 *     started and never released early (another run would overtake the retained one), but
 *     put back as they were (their idle since the claim, their delivery count restored). A
 *     run keeps at most one batch of held entries: while any key is held it claims nothing
 *     beside a round and each claim takes no more than what keeps the held entries within a
 *     batch, and once they fill one the run ends (it does not walk a key's backlog into its
 *     PEL);
 * (d) a crash leaves entries pending exactly as without overlap (reclaimed after minIdle).
 * Nothing is acked that a handler did not commit: a settle only carries decided verdicts.
 * The byte budget is enforced by claim.lua: each claim carries the bytes the run may still
 * hold (maxRoundBytes less the batch in hand, and for one sent early less the allowance of
 * the claim still out too), and the reply never exceeds them.
 */
import { freshRead, NOTHING_CLAIMED, readShort, waitCommand, waitedEntries, type ClaimPlan, type ClaimResult, type FreshRead } from './claim';
import { flowOf, type ConsumerConfig } from './config';
import type { StreamEntry } from '../entry/entry';
import { EntryFields } from '../entry/entry-fields';
import { exchange, type ExchangeOutcome, type ExchangeRequest } from './exchange';
import { CallbackError, RedisCommandError } from '../ground/errors';
import { ensureGroup } from './groups';
import { ReclaimCadence, type Reclaim } from './reclaim-cadence';
import { boundByDeadline, DEADLINE_OVERRUN_MS } from '../redis/deadline';
import { meterPort, type MeteredPort } from '../redis/metered';
import type { RedisPort } from '../redis/port';
import type { ScriptCall } from '../redis/script';
import { heldEntry, holdCall, releaseCall, type HeldEntry } from './release';
import { addRound, earliest, EMPTY_RUN, type RoundReport, type RunReport } from './report';
import { decideRound, orderingKeys, roundReport, sortUnstarted, withClaim, type RoundDeps } from './round';
import { RoundSizer, type ClaimRoom } from './round-size';
import type { RunOptions } from './run-options';
import { NOTHING_SETTLED, settleCall, type SettleResult } from './settle';
import { sleep } from './wait';
import { isPromiseLike } from '../ground/maybe-promise';
import { admittedOrderingKeys, flowOrderingKey, RunLeases, type AdmittedLeases } from './flow-lease';

/**
 * The last exchange of a run ends by deadline + this (I6: a run ends by deadline + 1 s, and
 * the process around it needs a moment to report and exit) — except when the run only gets
 * there later (a handler blocked the event loop past it): then it still gets
 * FINAL_EXCHANGE_MIN_MS, since the settle of what committed and the release of what never
 * started are always attempted (SPEC §5.1).
 */
export const FINAL_EXCHANGE_LIMIT_MS = 700;
export const FINAL_EXCHANGE_MIN_MS = 400;

/** A claimed batch and when it was taken (held entries keep their idle time since then). */
interface Batch {
  readonly claim: ClaimResult;
  readonly claimedAt: number;
  /** The flow leases its entries were admitted under (flow runs; none by a wait). Required: a batch built without them would never give them back. */
  readonly leases: AdmittedLeases | undefined;
  /** Delivered by a wait (one entry): it says nothing of what else is there, so nothing is claimed beside it. */
  readonly woken?: boolean;
}

/**
 * A round handled and decided whose report is not out yet. It keeps counts and the settle
 * call (ids), never the entries' payloads: a round carried beside the next one would
 * otherwise keep two batches of entries alive.
 */
interface Unsettled {
  /** The round's report as far as its claim and verdicts tell; settle counts, round trips and duration come at emit. */
  readonly tally: RoundReport;
  readonly settle: ScriptCall | undefined;
  readonly startedAt: number;
  /** Never handed to a handler and free to be released (only when the round was cut by a stop). */
  readonly unstarted: readonly StreamEntry[];
}

/**
 * An exchange out, and the run's round trips once it was sent: a round it settles reports
 * those (an exchange sent after it, before its answer landed, belongs to the next round).
 */
interface SentExchange {
  readonly outcome: Promise<ExchangeOutcome>;
  readonly trips: number;
}

/** A claim to send and what the cadence planned it to reclaim (told back to the cadence with its answer). */
interface PlannedClaim {
  readonly plan: ClaimPlan;
  readonly reclaim: Reclaim;
}

export class RunLoop {
  readonly #deps: RoundDeps;
  readonly #options: RunOptions;
  readonly #config: ConsumerConfig;
  readonly #metered: MeteredPort;
  /** Every exchange but the last ends by deadline + overrun, whatever Redis does (issue 12 item 8). */
  readonly #port: RedisPort;
  readonly #sizer: RoundSizer;
  readonly #cadence: ReclaimCadence;
  readonly #deadline: number;
  readonly #settleBy: number;
  readonly #startedAt: number;
  /** Names this run's one-claim gate keys (claim.ts): unique across the runs of every process. */
  readonly #gatePrefix = randomToken();
  #gates = 0;
  /** With config `flow`: the keys this run leases and the entries it holds under them (flow-lease.ts). */
  readonly #leases: RunLeases | undefined;

  // ---- what the stop path needs (see the header)
  #carried: Unsettled | undefined;
  #current: Unsettled | undefined;
  #ahead: Batch | undefined;
  /** A batch claimed by an exchange sent early and landed outside a round (the stop path, a claim after): never handled yet. */
  #later: Batch | undefined;
  readonly #taken: StreamEntry[] = [];
  /** The flow leases of `#taken`'s entries, claim by claim. */
  readonly #takenLeases: AdmittedLeases[] = [];
  /** Ordering keys with a retained entry in this run, and the entries they hold. */
  readonly #heldKeys = new Set<string>();
  readonly #heldEntries = new Map<string, HeldEntry>();
  /**
   * Rounds whose settle failed, in the order their answers landed: the stop path sends each
   * again. With a settle sent early, two can fail before the run stops (one landed with the
   * exchange beside the round, the next by the stop path).
   */
  readonly #replay: Unsettled[] = [];
  /** The first failure: a refused exchange, or user code that threw. The run stops at it. */
  #failure: unknown;
  #failed = false;

  /**
   * A round's settle sent as soon as the round was decided, behind the exchange beside it on
   * the same connection (TCP: see #sendsEarly). With a claim (`ahead`), it is the next
   * round's exchange beside: that round adopts it. Without one (a flow run's settle on its
   * own), the next round's exchange goes out behind it unanswered, as a carried settle goes
   * out beside a claim; it is landed once that round is decided, before the next settle is
   * sent. The stop path lands either.
   */
  #settling: (SentExchange & { readonly round: Unsettled; readonly ahead?: PlannedClaim }) | undefined;
  /** The exchange out beside the round being handled (it never rejects). */
  #beside: (SentExchange & { readonly carried: Unsettled | undefined; readonly ahead: PlannedClaim | undefined }) | undefined;
  #decidedRounds = 0;
  #groupEnsured = false;
  /** True once a claim went through here: its script is in Redis's cache, so a claim may run inside MULTI. */
  #scriptLoaded = false;
  #total = EMPTY_RUN;
  /** The earliest not-yet-due time any claim of this run saw (RunReport.nextDueAt). */
  #nextDueAt: number | undefined;
  /** When the rate limit lets the next entry start (local clock), after a claim it cut short. */
  #rateWakeAt: number | undefined;
  /** A claim was not sent because the time left could not cover one more entry (see #planClaim). */
  #outOfTime = false;
  /** #metered.roundTrips when the last round was reported. */
  #reportedRoundTrips = 0;

  constructor(deps: RoundDeps, options: RunOptions, startedAt: number, deadline: number) {
    this.#deps = deps;
    this.#options = options;
    this.#config = deps.config;
    this.#startedAt = startedAt;
    this.#deadline = deadline;
    this.#settleBy = deadline - deps.config.settleReserveMs;
    this.#metered = meterPort(deps.port);
    this.#port = boundByDeadline(this.#metered, deadline + DEADLINE_OVERRUN_MS, deps.now);
    this.#sizer = new RoundSizer(deps.config, deps.memory.recall(deps.config.keys.stream, deps.config.group));
    this.#cadence = new ReclaimCadence(deps.config.reclaimEveryRounds);
    const flow = flowOf(deps.config);
    this.#leases = flow === undefined ? undefined : new RunLeases(randomToken(), flow.limit, flow.order === 'strict', flow.share, this.#config.rateLimit?.key === 'flow');
  }

  async run(): Promise<RunReport> {
    try {
      let batch = await this.#firstBatch();
      while (batch !== undefined) batch = await this.#round(batch);
    } catch (error) {
      // Only a defect gets here (every expected failure is recorded where it happens). An
      // exchange still out beside the round is landed first, so what it claimed is given back.
      this.#fail(error);
      await this.#landBeside();
    }
    return this.#finish();
  }

  /** The answer of the exchange sent beside a round: reports the round it settled, keeps the batch it claimed. */
  async #landBeside(): Promise<void> {
    const beside = this.#beside;
    if (beside === undefined) return;
    this.#beside = undefined;
    const outcome = await beside.outcome;
    this.#landSettles(beside.carried === undefined ? [] : [beside.carried], outcome, beside.trips);
    this.#ahead = this.#landClaim(beside.ahead, outcome);
  }

  readonly #aborted = (): boolean => this.#options.signal?.aborted === true;
  /** No handler starts and nothing more is claimed once this holds. */
  readonly #stopping = (): boolean => this.#failed || this.#aborted() || this.#deps.now() >= this.#settleBy;

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#failure = error;
  }

  // ---- rounds

  /** Handles one batch while the exchange beside it settles the previous round and claims the next; the next batch, or undefined to stop. */
  async #round(batch: Batch): Promise<Batch | undefined> {
    const startedAt = this.#deps.now();
    const { claim } = batch;
    const beside = this.#sendBeside(batch);
    // ioredis writes a pipeline to its socket at once; fetch (REST) needs the event loop to
    // get the request out, and handlers that never yield to it would hold it back until the
    // round is over — no overlap at all.
    if (beside !== undefined && this.#metered.transport !== 'tcp') await yieldToEventLoop();

    const keys = this.#orderingKeys(batch);
    const decided = await decideRound(this.#deps, claim.entries, keys, this.#deadline, this.#heldKeys, this.#stopping);
    this.#sizer.observeHandling(decided.handled, this.#deps.now() - startedAt);
    for (const entry of decided.held) this.#heldEntries.set(entry.id, heldEntry(entry, batch.claimedAt));
    this.#decidedRounds += 1;
    // The previous round's settle, sent early on its own, answered while this round was handled.
    await this.#landSettling();
    const current: Unsettled = {
      tally: roundReport(decided, NOTHING_SETTLED, claim, 0, 0),
      settle: settleCall(this.#config, decided.decisions, this.#leases?.returnedBy(batch.leases, decided.decisions, decided.handedOver)),
      startedAt,
      unstarted: decided.unstarted,
    };
    const early = beside !== undefined && !this.#failed && this.#sendsEarly(current);
    const next = early ? this.#earlyPlan(claim) : undefined;
    if (next !== undefined) this.#settling = { round: current, ...this.#sent(this.#send({ settles: [current.settle!], claim: next.plan })), ahead: next };
    else if (early && this.#leases !== undefined) this.#settling = { round: current, ...this.#sent(exchange(this.#port, this.#config, { settles: [current.settle!] })) };
    else this.#current = current;
    const sentEarly = this.#settling?.round === current;

    if (beside !== undefined) await this.#landBeside();
    if (this.#mustStop(claim)) return undefined;

    // The run goes on: the round just decided is carried into the next exchange (unless its settle went out already).
    this.#current = undefined;
    if (!sentEarly) this.#carried = current;
    const handleNext = this.#ahead;
    this.#ahead = undefined;
    if (handleNext !== undefined) return handleNext;
    if (this.#options.mode === 'continuous' && readShort(claim)) return this.#idle();
    return this.#claimAfter();
  }

  /** The batch's ordering keys: under flow leases its flow keys, as its admission has them already (taken at the round's start: none given back yet). */
  #orderingKeys(batch: Batch): ReturnType<typeof orderingKeys> {
    if (batch.leases !== undefined && this.#deps.orderingKey === flowOrderingKey) return admittedOrderingKeys(batch.leases);
    return orderingKeys(this.#deps, batch.claim.entries);
  }

  /**
   * The exchange beside a round: the one sent early when the round before was decided, or
   * now the carried settle and the claim ahead (none beside a woken batch).
   */
  #sendBeside(batch: Batch): Promise<ExchangeOutcome> | undefined {
    const sent = this.#settling;
    if (sent?.ahead !== undefined) {
      this.#settling = undefined;
      this.#beside = { outcome: sent.outcome, trips: sent.trips, carried: sent.round, ahead: sent.ahead };
      return sent.outcome;
    }
    const carried = this.#takeCarried();
    const ahead = batch.woken === true ? undefined : this.#aheadPlan(batch.claim);
    if (carried === undefined && ahead === undefined) {
      this.#beside = undefined;
      return undefined;
    }
    const request: ExchangeRequest = { settles: carried === undefined ? [] : [carried.settle!], claim: ahead?.plan };
    this.#beside = { ...this.#sent(this.#send(request)), carried, ahead };
    return this.#beside.outcome;
  }

  /** An exchange just sent, with the run's round trips so far (see SentExchange). */
  #sent(outcome: Promise<ExchangeOutcome>): SentExchange {
    return { outcome, trips: this.#metered.roundTrips };
  }

  /**
   * Over TCP a decided round's settle goes out at once, behind the exchange beside the round
   * (one connection keeps their order), with the claim after next when one may go
   * (#earlyPlan): Redis settles and claims while Node lands that exchange. Without a claim,
   * only a flow run sends it (Redis returns its leases meanwhile; a plain settle waits for
   * the next exchange). REST keeps one exchange at a time (two HTTP requests need not arrive
   * in order), as does a round cut by a stop (its unstarted entries go with the stop path's
   * release).
   */
  #sendsEarly(round: Unsettled): boolean {
    return this.#metered.transport === 'tcp' && round.settle !== undefined && round.unstarted.length === 0;
  }

  /**
   * The answer to a settle sent early: its round is reported, or kept for the final settle
   * when it failed (#replay; a replayed settle is idempotent); a claim beside it that landed
   * here is kept in `#later`.
   */
  async #landSettling(): Promise<void> {
    const settling = this.#settling;
    if (settling === undefined) return;
    this.#settling = undefined;
    const outcome = await settling.outcome;
    this.#landSettles([settling.round], outcome, settling.trips);
    if (settling.ahead !== undefined) this.#later = this.#landClaim(settling.ahead, outcome);
  }

  /** A batch an early exchange claimed and the stop path or a claim after landed (see #later). */
  #takeLater(): Batch | undefined {
    const later = this.#later;
    this.#later = undefined;
    return later;
  }

  /** The carried round, if its settle is still to send; one with nothing to settle is reported at once. */
  #takeCarried(): Unsettled | undefined {
    const carried = this.#carried;
    if (carried === undefined || carried.settle !== undefined) return carried;
    this.#carried = undefined;
    this.#emit(carried, NOTHING_SETTLED);
    return undefined;
  }

  /** Settle the carried round and claim the next batch in one round trip. */
  async #claimAfter(): Promise<Batch | undefined> {
    await this.#landSettling();
    const later = this.#takeLater();
    if (later !== undefined) return this.#goOnWith(later);
    const carried = this.#takeCarried();
    const next = this.#planClaim(0, this.#wholeRoom(this.#freshRead()));
    if (next === undefined) return undefined;
    const outcome = await this.#send({ settles: carried === undefined ? [] : [carried.settle!], claim: next.plan });
    this.#landSettles(carried === undefined ? [] : [carried], outcome);
    const batch = this.#landClaim(next, outcome);
    if (batch !== undefined || this.#failed || this.#scriptLoaded || next.plan.read !== 'native') return this.#goOnWith(batch);
    // Redis lost its script cache (a restart, a failover): the claim took nothing; claim again through claim.lua alone, which loads it.
    const again = this.#planClaim(0, this.#wholeRoom('lua'));
    if (again === undefined) return undefined;
    return this.#goOnWith(this.#landClaim(again, await this.#send({ claim: again.plan })));
  }

  /** The batch to handle next; none once the run failed (the batch is then given back unstarted). */
  #goOnWith(batch: Batch | undefined): Batch | undefined {
    if (batch === undefined || !this.#failed) return batch;
    this.#ahead = batch;
    return undefined;
  }

  /**
   * The run's first claim: through claim.lua alone (it loads the script for the claims
   * inside MULTI that follow, and an idle run costs exactly one command). A stream or group
   * that does not exist yet is created on NOGROUP, under the run's deadline, and claimed again.
   */
  async #firstBatch(): Promise<Batch | undefined> {
    const first = this.#planClaim(0, this.#wholeRoom('lua'));
    if (first === undefined) return undefined;
    let outcome = await this.#send({ claim: first.plan });
    if (isNoGroup(outcome.error) && !this.#groupEnsured) {
      this.#groupEnsured = true;
      try {
        await ensureGroup(this.#port, this.#config.keys.stream, this.#config.group, this.#config.startFrom);
      } catch (error) {
        this.#fail(error);
        return undefined;
      }
      outcome = await this.#send({ claim: first.plan });
    }
    return this.#goOnWith(this.#landClaim(first, outcome));
  }

  /**
   * Nothing more came (continuous mode): wait for an entry — on the port's blocking connection
   * over TCP (one entry, which wakes the run at once), with a timer elsewhere — after the
   * carried round is settled. An abort ends the wait at once.
   */
  async #idle(): Promise<Batch | undefined> {
    await this.#landSettling();
    const later = this.#takeLater();
    if (later !== undefined) return this.#goOnWith(later);
    const carried = this.#takeCarried();
    if (carried !== undefined) {
      const outcome = await this.#send({ settles: [carried.settle!] });
      this.#landSettles([carried], outcome);
    }
    const now = this.#deps.now();
    // A claim the rate limit cut short says when the next entry may start: wait no longer.
    const rateWait = this.#rateWakeAt === undefined ? Infinity : Math.max(1, this.#rateWakeAt - now);
    const waitMs = Math.min(this.#config.blockMs, this.#settleBy - now, rateWait);
    if (this.#stopping() || waitMs <= 0) return undefined;
    const reader = this.#waitsInRead() ? this.#port.blockingReader?.() : undefined;
    if (reader !== undefined) {
      let reply;
      try {
        reply = await reader.read(waitCommand(this.#config, waitMs), this.#options.signal);
      } catch (error) {
        this.#fail(error);
        return undefined;
      }
      if (reply instanceof RedisCommandError) {
        this.#fail(reply);
        return undefined;
      }
      const entries = waitedEntries(reply);
      if (entries.length > 0) return { claim: { ...NOTHING_CLAIMED, entries, freshRequested: 1, bytes: entryBytes(entries) }, claimedAt: this.#deps.now(), leases: undefined, woken: true };
    } else {
      await sleep(waitMs, this.#options.signal);
    }
    return this.#claimAfter();
  }

  /** Continuous mode waits on a blocking read over TCP (config `wait`, default `block`). */
  #waitsInRead(): boolean {
    // A blocking read delivers past the claim script, where flow leases and the rate limit apply (config.ts refuses `block` with them).
    const strategy = this.#config.wait ?? (this.#metered.transport === 'tcp' && !this.#admitsInScript() ? 'block' : 'sleep');
    return strategy === 'block' && this.#metered.transport === 'tcp';
  }

  /** True when the run ends after the round just handled. */
  #mustStop(claim: ClaimResult): boolean {
    if (this.#stopping()) return true;
    // A claim sent early (judged on the round before) may have found entries after all: they are handled, not released.
    if (this.#drained(claim) && !(this.#ahead !== undefined && this.#ahead.claim.entries.length > 0)) return true;
    if (this.#options.maxRounds !== undefined && this.#decidedRounds >= this.#options.maxRounds) return true;
    // SPEC §5.1 "Held ordering keys": a batch of held entries, and the run ends its drain.
    return this.#heldEntries.size >= this.#config.batch;
  }

  #drained(claim: ClaimResult): boolean {
    if (this.#options.mode !== 'drain') return false;
    // The rate limit left no room: the run ends, reporting when the next entry may start (nextDueAt).
    if (claim.rateLimited === true && claim.entries.length === 0) return true;
    // Entries parked behind a busy flow key were read: more may follow them. Ready flow keys
    // this claim served or made ready still wait: the next claim serves them.
    return freshRead(claim) === 0 && !claim.cut && claim.nextCursor === '0-0' && claim.flowReadyMore !== true;
  }

  // ---- claims

  /**
   * The claim to send beside handling `claim`, if one may go (rule (a)): not before a round
   * was handled, not while a key is held (rule (c)), not after a short read in continuous
   * mode (the run waits instead), and within the bytes the batch in hand leaves of the budget.
   */
  #aheadPlan(claim: ClaimResult): PlannedClaim | undefined {
    if (!this.#mayClaimBeside(claim)) return undefined;
    const allowance = Math.min(this.#roundBytes(), this.#config.maxRoundBytes - claim.bytes);
    if (allowance <= 0) return undefined;
    // Beside an empty batch the run holds nothing: one larger entry may come alone (else a
    // stream of entries over the budget would be cut to nothing claim after claim).
    return this.#planClaim(claim.entries.length, { ...this.#wholeRoom(this.#freshRead()), allowance, alone: claim.entries.length === 0 });
  }

  /**
   * The claim to send with a round's settle as soon as the round is decided (#sendsEarly): the
   * one beside the next round, while the claim beside this one is still out. By rule (a) on
   * this round's claim, where #aheadPlan judged the next one's: a read that comes back short
   * meanwhile only makes this claim read little (a drain that then ends handles what it found
   * rather than release it; a continuous run handles its batch, usually empty, before it
   * waits). It is sized after the batch still out, counted at what its claim asked for, and
   * its bytes leave room for that claim's whole allowance and the batch in hand: the three
   * are within the budget.
   * Never one larger entry alone (the run holds the batch still out). None when the claim
   * still out may bring one, or reclaims in full (the cadence plans from its answer: a cut
   * one goes on in full). Behind a probe it goes: a probe that finds idle entries makes the
   * claim after this one a full reclaim, one round later (a flow run otherwise sent every
   * probe round's settle on its own, and its claim with half the lead); nor when the room
   * left would not hold a whole batch of entries of the size seen so far (large entries: the claim sent
   * beside the next round, once this batch is gone, has more room, and batches keep their size).
   * Not over a Cluster: a redirect sends the two exchanges out again each on its own, and the
   * claim sent second could run first and take the earlier entries.
   */
  #earlyPlan(claim: ClaimResult): PlannedClaim | undefined {
    const out = this.#beside?.ahead;
    if (out === undefined || out.plan.alone || out.reclaim === 'full' || this.#metered.cluster || !this.#mayClaimBeside(claim)) return undefined;
    const allowance = Math.min(this.#roundBytes(), this.#config.maxRoundBytes - claim.bytes - out.plan.allowance);
    if (allowance <= 0 || this.#sizer.entriesWithin(allowance) < this.#config.batch) return undefined;
    // A probe still out may bring what it reclaims too: counted as ahead (rule (a)).
    return this.#planClaim(out.plan.fresh + out.plan.reclaim, { ...this.#wholeRoom(this.#freshRead()), allowance, alone: false });
  }

  /**
   * Rule (a) for a claim beside the round after `claim`'s: a round was handled, nothing is
   * drained or held, no short read in continuous mode (the run waits instead), and that
   * round is not the last one allowed.
   */
  #mayClaimBeside(claim: ClaimResult): boolean {
    if (!this.#sizer.mayClaimAhead() || this.#drained(claim) || this.#heldKeys.size > 0) return false;
    if (this.#options.mode === 'continuous' && readShort(claim)) return false;
    return this.#options.maxRounds === undefined || this.#decidedRounds + 1 < this.#options.maxRounds;
  }

  /**
   * Room for a claim when the run holds no other batch: a round's share of the budget, and one
   * larger entry alone. While entries are held, the claim takes no more than keeps them within
   * a batch (rule (c)), reclaimed entries included.
   */
  #wholeRoom(read: FreshRead): ClaimRoom {
    const room = this.#config.batch - this.#heldEntries.size;
    return { allowance: this.#roundBytes(), alone: true, freshCap: room, reclaimCap: this.#heldEntries.size > 0 ? room : undefined, read };
  }

  /**
   * The bytes one claim may take: half the budget, so that the claim beside a round has the
   * other half. A batch of large entries that filled the whole budget would leave the claim
   * beside it no room, and the run would read and handle by turns (64 KiB entries: about a
   * fifth slower than 8f0e0f9, which read 500 of them a round); batches that the count limits
   * never come near it.
   */
  #roundBytes(): number {
    return Math.floor(this.#config.maxRoundBytes / 2);
  }

  /**
   * How fresh entries are read: through claim.lua over REST and until the script is loaded,
   * natively (proven inside MULTI) over TCP — with flow leases too, admitted by the call
   * beside the read from the entries' key records (claim.lua 'admit'), but never with a
   * rate limit or a share, which the script counts over every entry it returns.
   */
  #freshRead(): FreshRead {
    if (this.#metered.transport !== 'tcp' || !this.#scriptLoaded || this.#config.rateLimit !== undefined) return 'lua';
    const flow = this.#config.flow;
    return flow && flow.share !== undefined ? 'lua' : 'native';
  }

  /** Flow leases or a rate limit: every entry must be admitted by the claim script, never by a blocking read. */
  #admitsInScript(): boolean {
    return this.#leases !== undefined || this.#config.rateLimit !== undefined;
  }

  /** The next claim, sized by time after `ahead` entries still to handle; undefined once the run stops. */
  #planClaim(ahead: number, room: ClaimRoom): PlannedClaim | undefined {
    if (this.#stopping()) return undefined;
    const reclaim = this.#cadence.due();
    const gate = room.read === 'native' ? `${this.#gatePrefix}${(this.#gates += 1).toString(36)}` : undefined;
    const now = this.#deps.now();
    const timeLeft = this.#settleBy - now;
    const plan = this.#sizer.plan(timeLeft, reclaim, ahead, { ...room, gate });
    if (plan === undefined) {
      // Not one more entry and its round trip fit before the settle reserve (rule (a)): with
      // nothing ahead, the run stops for its deadline, a few ms before it.
      if (ahead === 0 && this.#sizer.limit(timeLeft) === 0) this.#outOfTime = true;
      return undefined;
    }
    // Every planned claim is sent at once: counted for the cadence now, not when it answers.
    this.#cadence.sending(plan.reclaim > 0 ? reclaim : undefined);
    // A lease ends when this run's last exchange may still be out: the deadline + overrun (Redis clock, as a duration).
    const flow = this.#leases?.plan(this.#deadline + DEADLINE_OVERRUN_MS, now);
    return { plan: flow === undefined ? plan : { ...plan, flow }, reclaim: plan.reclaim > 0 ? reclaim : undefined };
  }

  /**
   * What a claim came back with: the batch, or nothing (and the run stops on the failure).
   * Entries a failed claim took all the same are kept for the final release. A native claim
   * refused with NOSCRIPT (Redis lost its script cache) took nothing: the next claim goes
   * through claim.lua alone again, which loads it.
   */
  #landClaim(planned: PlannedClaim | undefined, outcome: ExchangeOutcome): Batch | undefined {
    if (planned === undefined) return undefined;
    const { claim } = outcome;
    if (claim !== undefined) {
      this.#scriptLoaded = true;
      this.#nextDueAt = earliest(this.#nextDueAt, claim.nextDueAt);
      this.#rateWakeAt = rateWakeAt(claim, this.#deps.now());
      this.#cadence.claimed(planned.reclaim, claim);
      this.#sizer.observeClaim(claim.entries.length, claim.bytes);
      return { claim, claimedAt: this.#deps.now(), leases: this.#leases?.admitted(claim.entries) };
    }
    // Taken all the same, under leases when the claim script admitted them (a native read or its
    // admit call failed after it): the stop path gives those leases back with the entries.
    const takenLeases = this.#leases?.admitted(outcome.taken);
    if (takenLeases !== undefined) this.#takenLeases.push(takenLeases);
    this.#taken.push(...outcome.taken);
    if (planned.plan.read === 'native' && isNoScript(outcome.claimError)) this.#scriptLoaded = false;
    else this.#fail(outcome.claimError);
    return undefined;
  }

  /**
   * Reports each round whose settle was answered. One that was not is kept, in order, for the
   * final settle (#replay; a replayed settle is idempotent), and the run stops on the failure.
   */
  #landSettles(rounds: readonly Unsettled[], outcome: ExchangeOutcome, trips?: number): void {
    rounds.forEach((round, i) => {
      const settled = outcome.settled[i];
      if (settled === undefined) {
        if (!this.#replay.includes(round)) this.#replay.push(round);
        if (this.#carried === round) this.#carried = undefined;
        this.#fail(outcome.error);
        return;
      }
      if (this.#carried === round) this.#carried = undefined;
      this.#emit(round, settled, undefined, trips);
    });
  }

  async #send(request: ExchangeRequest): Promise<ExchangeOutcome> {
    const sentAt = this.#deps.now();
    const outcome = await exchange(this.#port, this.#config, request);
    this.#sizer.observeExchange(this.#deps.now() - sentAt);
    return outcome;
  }

  // ---- the one stop path

  /**
   * The run stops, whatever the reason: in one round trip under its own bound, settle what
   * was decided and not confirmed, release what no handler saw, put back what is held; then
   * the report, or the first failure with the report attached.
   */
  async #finish(): Promise<RunReport> {
    await this.#landSettling();
    const now = this.#deps.now();
    const rounds = [...this.#replay, this.#carried, this.#current].filter((round): round is Unsettled => round !== undefined);
    // Claimed and never handled: the batch ahead, and the one an early exchange claimed after it.
    const unhandled = [this.#ahead, this.#later].filter((batch): batch is Batch => batch !== undefined);
    const taken = sortUnstarted(this.#deps, this.#taken, this.#heldKeys);
    const held = [...this.#heldEntries.values()];
    const toRelease = rounds.flatMap((round) => round.unstarted);
    for (const batch of unhandled) {
      const sorted = sortUnstarted(this.#deps, batch.claim.entries, this.#heldKeys);
      for (const entry of sorted.held) held.push(heldEntry(entry, batch.claimedAt));
      toRelease.push(...sorted.unstarted);
    }
    for (const entry of taken.held) held.push(heldEntry(entry, now));
    toRelease.push(...taken.unstarted);
    // The leases of entries no round decided go back after the rounds' settles (last, so the
    // slots below stay the rounds'). A round's settle gave back its own entries' leases, those
    // it released or held included.
    const unseen = this.#leases?.returnedUnseen([...unhandled.map((batch) => batch.leases), ...this.#takenLeases]);
    const leaseSettle = unseen === undefined ? [] : [settleCall(this.#config, [], unseen)!];
    const request: ExchangeRequest = {
      settles: [...rounds.flatMap((round) => (round.settle === undefined ? [] : [round.settle])), ...leaseSettle],
      release: releaseCall(this.#config, toRelease),
      hold: holdCall(this.#config, held, now),
    };
    const until = finalExchangeBy(this.#deadline, now);
    const outcome = await exchange(boundByDeadline(this.#metered, until, this.#deps.now), this.#config, request);
    let slot = 0;
    rounds.forEach((round, i) => {
      const settled = round.settle === undefined ? NOTHING_SETTLED : (outcome.settled[slot++] ?? NOTHING_SETTLED);
      const last = i === rounds.length - 1;
      this.#emit(round, settled, last ? { released: outcome.released, held: outcome.held, ahead: unhandled } : undefined);
    });
    if (rounds.length === 0) {
      // No round to carry them (the run stopped before or right after deciding one): count them on the run.
      const total = this.#total;
      this.#total = unhandled.reduce((sum, batch) => withClaim(sum, batch.claim), { ...total, released: total.released + outcome.released, held: total.held + outcome.held });
    }
    if (leaseSettle.length > 0) {
      const lost = outcome.settled[slot]?.leaseLost ?? 0;
      this.#total = { ...this.#total, flowLeaseLost: this.#total.flowLeaseLost + lost };
    }
    this.#deps.memory.remember(this.#config.keys.stream, this.#config.group, this.#sizer.observed());
    const report = this.#report();
    const failure = this.#failed ? this.#failure : outcome.error;
    if (this.#failed || outcome.error !== undefined) throw withRunReport(failure, report);
    return report;
  }

  #report(): RunReport {
    const now = this.#deps.now();
    const nextDueAt = this.#nextDueAt;
    return {
      ...this.#total,
      ...(nextDueAt === undefined ? {} : { nextDueAt }),
      roundTrips: this.#metered.roundTrips,
      durationMs: now - this.#startedAt,
      stoppedForDeadline: this.#total.stoppedForDeadline || (!this.#aborted() && (now >= this.#settleBy || this.#outOfTime)),
    };
  }

  /** `trips`: the run's round trips when the round's settle went out (see SentExchange); all of them so far by default. */
  #emit(round: Unsettled, settled: SettleResult, last?: { released: number; held: number; ahead: readonly Batch[] }, trips = this.#metered.roundTrips): void {
    const { tally } = round;
    const upTo = Math.max(trips, this.#reportedRoundTrips);
    // A batch claimed ahead and released unstarted still counts for what its claim did.
    const report: RoundReport = (last?.ahead ?? []).reduce<RoundReport>(
      (sum, batch) => withClaim(sum, batch.claim),
      {
        ...tally,
        acked: settled.acked,
        deadLettered: settled.deadLetterRecords,
        markerHits: settled.markerHits,
        settledUnconfirmed: settled.unconfirmed,
        flowLeaseLost: settled.leaseLost ?? 0,
        released: last?.released ?? 0,
        held: last?.held ?? 0,
        roundTrips: upTo - this.#reportedRoundTrips,
        durationMs: this.#deps.now() - round.startedAt,
        stoppedForDeadline: tally.stoppedForDeadline && !this.#aborted(),
      },
    );
    this.#reportedRoundTrips = upTo;
    this.#total = addRound(this.#total, report);
    const onRound = this.#options.onRound;
    if (onRound === undefined) return;
    // User code never skips the settle (SPEC §5.1): a hook that throws, or whose promise
    // rejects (an async function fits the type), stops the run, which throws once settled.
    const failed = (error: unknown) => this.#fail(new CallbackError('onRound', error));
    try {
      const answer: unknown = onRound(report);
      if (isPromiseLike(answer)) Promise.resolve(answer).then(undefined, failed);
    } catch (error) {
      failed(error);
    }
  }
}

/** When a run's last exchange must have answered, if it starts at `now` (see FINAL_EXCHANGE_LIMIT_MS). */
export function finalExchangeBy(deadline: number, now: number): number {
  const limit = deadline + FINAL_EXCHANGE_LIMIT_MS;
  if (now >= limit) return now + FINAL_EXCHANGE_MIN_MS;
  return Math.max(deadline + DEADLINE_OVERRUN_MS, Math.min(now + FINAL_EXCHANGE_MIN_MS, limit));
}

/** The report a failed run got as far as, attached to what it throws (see runReportOf). */
function withRunReport(error: unknown, report: RunReport): unknown {
  if (typeof error === 'object' && error !== null && Object.isExtensible(error)) {
    Object.defineProperty(error, 'runReport', { value: report, configurable: true });
    return error;
  }
  return new CallbackError('run', error, report);
}

function isNoGroup(error: unknown): boolean {
  return error instanceof RedisCommandError && error.replyCode === 'NOGROUP';
}

function isNoScript(error: unknown): boolean {
  return error instanceof RedisCommandError && error.replyCode === 'NOSCRIPT';
}

/** Bytes of entries a blocking read delivered (the claim script did not measure them). */
function entryBytes(entries: readonly StreamEntry[]): number {
  let bytes = 0;
  for (const entry of entries) bytes += entry.id.length + (entry.fields instanceof EntryFields ? entry.fields.byteSize() : 0);
  return bytes;
}

function randomToken(): string {
  const bytes = new Uint8Array(6);
  globalThis.crypto.getRandomValues(bytes);
  return `${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}.`;
}

/** One turn of the event loop (setImmediate where the runtime has it: Workers may not). */
function yieldToEventLoop(): Promise<void> {
  const later: (callback: () => void) => unknown = globalThis.setImmediate ?? ((callback) => setTimeout(callback, 0));
  return new Promise((resolve) => later(resolve));
}

/** The local time a claim the rate limit cut short says the next entry may start: only a duration crosses the clocks. */
function rateWakeAt(claim: ClaimResult, localNow: number): number | undefined {
  if (claim.rateLimited !== true || claim.nextDueAt === undefined || claim.redisNow === undefined) return undefined;
  return localNow + Math.max(0, claim.nextDueAt - claim.redisNow);
}
