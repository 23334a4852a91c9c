/**
 * One round (SPEC §5.1): claim → decide → settle, in exactly two Redis round trips
 * whatever the batch size (one when there was nothing to settle). Any Redis failure
 * rejects the round: whatever was not settled stays in the PEL, never reported as
 * "no messages".
 */
import { claimEntries, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import { decideAll, type DecideResult, type EntryProcessor } from './decide';
import type { StreamEntry } from './entry';
import { meterPort } from './redis/metered';
import type { RedisPort } from './redis/port';
import type { RoundReport } from './report';
import type { ConsumerScope } from './telemetry/tracing';
import { settleDecisions, type Decision, type SettleResult } from './settle';
import { Verdicts, type Verdict } from './verdict';

const HELD: Verdict = Object.freeze(Verdicts.retain('ordering'));

export interface RoundDeps {
  readonly port: RedisPort;
  readonly config: ConsumerConfig;
  readonly process: EntryProcessor;
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now: () => number;
}

/** The stream and group a consumer's trace spans name. */
export function consumerScope(config: ConsumerConfig): ConsumerScope {
  return { stream: config.keys.stream, group: config.group };
}

export interface RoundOutcome {
  readonly report: RoundReport;
  readonly claim: ClaimResult;
}

export async function pollRound(deps: RoundDeps, deadline: number): Promise<RoundOutcome> {
  const { config, now } = deps;
  const startedAt = now();
  const port = meterPort(deps.port);
  const claim = await claimEntries(port, config);
  const decided = await decideAll(claim.entries, deps.process, {
    concurrency: config.concurrency,
    orderingKey: deps.orderingKey,
    deadline,
    handlerTimeoutMs: config.handlerTimeoutMs,
    settleReserveMs: config.settleReserveMs,
    now,
    scope: consumerScope(config),
  });
  const settled = await settleDecisions(port, config, decided.decisions);
  const report = roundReport(decided, settled, claim, port.roundTrips, now() - startedAt);
  return { report, claim };
}

export interface DecidedRound extends Omit<DecideResult, 'handedOver'> {
  /** Entries handed to the processor; every other entry of the round was never started. */
  readonly started: Pick<ReadonlySet<StreamEntry>, 'has' | 'size'>;
}

/**
 * The entries of a round handed to the processor, from decideAll's flags: the set is built
 * only if someone asks (a stopping or failing run), not for every round.
 */
class StartedEntries implements Pick<ReadonlySet<StreamEntry>, 'has' | 'size'> {
  #set: Set<StreamEntry> | undefined;

  constructor(
    private readonly entries: readonly StreamEntry[],
    private readonly flags: Uint8Array,
    readonly size: number,
  ) {}

  has(entry: StreamEntry): boolean {
    if (this.#set === undefined) {
      this.#set = new Set<StreamEntry>();
      for (let i = 0; i < this.entries.length; i += 1) if (this.flags[i] === 1) this.#set.add(this.entries[i]!);
    }
    return this.#set.has(entry);
  }
}

/**
 * Step 2 of a round inside a run. `held` carries ordering keys across the run's rounds: a
 * key with a retained entry (failed, timed out — maybe still running — or itself held) holds
 * every later entry of that key in this run, so one key's entries never overtake each other
 * across rounds either. Once `stop()` says so, no further entry reaches the processor.
 */
export async function decideRound(
  deps: RoundDeps,
  entries: readonly StreamEntry[],
  deadline: number,
  held: Set<string>,
  stop: () => boolean,
): Promise<DecidedRound> {
  const keyOf = deps.orderingKey;
  let toDecide = entries;
  const carried: Decision[] = [];
  if (keyOf !== undefined && held.size > 0) {
    toDecide = entries.filter((entry) => {
      const key = keyOf(entry);
      if (key === undefined || !held.has(key)) return true;
      carried.push({ entry, verdict: HELD });
      return false;
    });
  }
  const decided = await decideAll(toDecide, deps.process, {
    concurrency: deps.config.concurrency,
    orderingKey: keyOf,
    deadline,
    handlerTimeoutMs: deps.config.handlerTimeoutMs,
    settleReserveMs: deps.config.settleReserveMs,
    now: deps.now,
    scope: consumerScope(deps.config),
    stop,
  });
  const decisions = carried.length === 0 ? decided.decisions : [...decided.decisions, ...carried];
  if (keyOf !== undefined) {
    // Keys of carried entries are held already; an entry held inside this round follows a
    // started one of its key, which holds the key itself.
    for (let i = 0; i < toDecide.length; i += 1) {
      if (decided.handedOver[i] !== 1 || decided.decisions[i]!.verdict.kind !== 'retain') continue;
      const key = keyOf(toDecide[i]!);
      if (key !== undefined) held.add(key);
    }
  }
  const started = new StartedEntries(toDecide, decided.handedOver, decided.handled);
  return { ...decided, decisions, started };
}

/**
 * Entries a stopping run releases: never handed to a handler, and not behind an earlier
 * retained entry of their ordering key (another run must not overtake that one).
 */
export function releasable(deps: RoundDeps, decided: DecidedRound, held: ReadonlySet<string>): StreamEntry[] {
  const keyOf = deps.orderingKey;
  return decided.decisions
    .filter(({ entry, verdict }) => {
      // Only retained entries go back: one decided without a handler (entry_malformed) is settled.
      if (verdict.kind !== 'retain' || decided.started.has(entry)) return false;
      const key = keyOf?.(entry);
      return key === undefined || !held.has(key);
    })
    .map(({ entry }) => entry);
}

/**
 * What Redis did, from the settle script's reply: an id XACK no longer found pending is not
 * counted as acked, and a dead-letter replayed over its marker is a marker hit, not a
 * second record. Retained and auth rejections come from the verdicts (Redis sees neither).
 */
export function roundReport(
  decided: Omit<DecideResult, 'handedOver'>,
  settled: SettleResult,
  claim: Pick<ClaimResult, 'reclaimed' | 'deletedIds'>,
  roundTrips: number,
  durationMs: number,
  released = 0,
): RoundReport {
  let retained = 0;
  let handlerContractErrors = 0;
  let authRejected = 0;
  for (const { verdict } of decided.decisions) {
    if (verdict.kind === 'retain') {
      retained += 1;
      if (verdict.cause === 'handler_contract') handlerContractErrors += 1;
    } else if (verdict.kind === 'dead-letter' && verdict.auth) authRejected += 1;
  }
  return {
    acked: settled.acked,
    deadLettered: settled.deadLetterRecords,
    markerHits: settled.markerHits,
    retained,
    handlerContractErrors,
    reclaimed: claim.reclaimed,
    released,
    deletedPending: claim.deletedIds.length,
    authRejected,
    handled: decided.handled,
    handlerMicrosSum: decided.handlerMicrosSum,
    roundTrips,
    durationMs,
    stoppedForDeadline: decided.stoppedForDeadline,
  };
}
