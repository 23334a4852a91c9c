/**
 * What a run needs to handle its rounds, and one round's step 2 (SPEC §5.1): decide every
 * entry of a claim, then tell apart what the run must settle, what it may give back, and what
 * it must keep pending behind an ordering key.
 */
import type { ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import { decideAll, KEY_FAILED, type DecideResult, type EntryProcessor, type OrderingKey } from './decide';
import type { StreamEntry } from '../entry/entry';
import { isPromiseLike } from '../ground/maybe-promise';
import type { RedisPort } from '../redis/port';
import type { RoundReport } from './report';
import type { RunMemory } from './run-memory';
import type { ConsumerScope } from '../telemetry/tracing';
import type { Decision, SettleResult } from './settle';

export interface RoundDeps {
  readonly port: RedisPort;
  readonly config: ConsumerConfig;
  readonly process: EntryProcessor;
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now: () => number;
  /** What earlier runs of this process observed (entry sizes, handling times); see run-memory.ts. */
  readonly memory: RunMemory;
}

/** The stream and group a consumer's trace spans name. */
export function consumerScope(config: ConsumerConfig): ConsumerScope {
  return { stream: config.keys.stream, group: config.group };
}

/**
 * The ordering key of each entry, computed once per entry for the whole run: user code, so
 * it may throw or answer something that is no key (a promise, a number) — such an entry gets
 * KEY_FAILED (never started, kept pending as if held).
 */
export function orderingKeys(deps: RoundDeps, entries: readonly StreamEntry[]): OrderingKey[] | undefined {
  const keyOf = deps.orderingKey;
  if (keyOf === undefined) return undefined;
  return entries.map((entry) => {
    try {
      const key: unknown = keyOf(entry);
      if (typeof key === 'string' || key === undefined) return key;
      // Not a key (a promise from an async function, a number): no order can be kept for it.
      if (isPromiseLike(key)) Promise.resolve(key).catch(() => {});
      return KEY_FAILED;
    } catch {
      return KEY_FAILED;
    }
  });
}

/** A round's entries sorted by what a stopping run does with them. */
export interface DecidedRound extends DecideResult {
  /** Never handed to a handler and free to go back to any run at once (released). */
  readonly unstarted: StreamEntry[];
  /** Never handed to a handler, behind a retained entry of their key (or of no computable key): kept pending as they are. */
  readonly held: StreamEntry[];
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
  keys: readonly OrderingKey[] | undefined,
  deadline: number,
  held: Set<string>,
  stop: () => boolean,
): Promise<DecidedRound> {
  const decided = await decideAll(entries, deps.process, {
    concurrency: deps.config.concurrency,
    keys,
    held,
    deadline,
    handlerTimeoutMs: deps.config.handlerTimeoutMs,
    settleReserveMs: deps.config.settleReserveMs,
    now: deps.now,
    scope: consumerScope(deps.config),
    stop,
  });
  const unstarted: StreamEntry[] = [];
  const kept: StreamEntry[] = [];
  decided.decisions.forEach(({ entry, verdict }, i) => {
    // Only retained entries stay: one decided without a handler (entry_malformed) is settled.
    if (verdict.kind !== 'retain' || decided.handedOver[i] === 1) return;
    (isHeld(keys?.[i], held) ? kept : unstarted).push(entry);
  });
  return { ...decided, unstarted, held: kept };
}

/** Entries claimed and never decided (a batch claimed ahead), sorted as decideRound sorts its own. */
export function sortUnstarted(deps: RoundDeps, entries: readonly StreamEntry[], held: ReadonlySet<string>): Pick<DecidedRound, 'unstarted' | 'held'> {
  const keys = held.size === 0 ? undefined : orderingKeys(deps, entries);
  const unstarted: StreamEntry[] = [];
  const kept: StreamEntry[] = [];
  entries.forEach((entry, i) => (isHeld(keys?.[i], held) ? kept : unstarted).push(entry));
  return { unstarted, held: kept };
}

function isHeld(key: OrderingKey, held: ReadonlySet<string>): boolean {
  return key === KEY_FAILED || (key !== undefined && held.has(key));
}

/**
 * What Redis did, from the settle script's reply: an id XACK no longer found pending is not
 * counted as acked, and a dead-letter replayed over its marker is a marker hit, not a
 * second record. Retained and auth rejections come from the verdicts (Redis sees neither).
 */
/** The counters a claim contributes to a report: what it did to the PEL, its cursor and the schedule. */
export type ClaimCounters = Pick<RoundReport, 'reclaimed' | 'deletedPending' | 'cursorResets' | 'scheduledMoved' | 'flowParked' | 'flowParkedLimited'>;
type CountedClaim = Pick<ClaimResult, 'reclaimed' | 'deletedIds' | 'cursorNote' | 'scheduledMoved' | 'flowParked' | 'flowParkedLimited'>;

/** `counters` plus what `claim` did (a claimed-ahead batch given back unstarted still counts). */
export function withClaim<T extends ClaimCounters>(counters: T, claim: CountedClaim | undefined): T {
  if (claim === undefined) return counters;
  return {
    ...counters,
    reclaimed: counters.reclaimed + claim.reclaimed,
    deletedPending: counters.deletedPending + claim.deletedIds.length,
    cursorResets: counters.cursorResets + (claim.cursorNote === undefined ? 0 : 1),
    scheduledMoved: counters.scheduledMoved + (claim.scheduledMoved ?? 0),
    flowParked: counters.flowParked + (claim.flowParked ?? 0),
    flowParkedLimited: counters.flowParkedLimited + (claim.flowParkedLimited ?? 0),
  };
}

export function roundReport(
  decided: Pick<DecideResult, 'decisions' | 'handled' | 'handlerMicrosSum' | 'stoppedForDeadline'>,
  settled: SettleResult,
  claim: CountedClaim & Pick<ClaimResult, 'nextDueAt'>,
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
      if (verdict.cause === 'handler_contract' || verdict.cause === 'ordering_key') handlerContractErrors += 1;
    } else if (verdict.kind === 'dead-letter' && verdict.auth) authRejected += 1;
  }
  const report: RoundReport = {
    acked: settled.acked,
    deadLettered: settled.deadLetterRecords,
    markerHits: settled.markerHits,
    settledUnconfirmed: settled.unconfirmed,
    retained,
    handlerContractErrors,
    reclaimed: 0,
    released,
    held: 0,
    cursorResets: 0,
    deletedPending: 0,
    scheduledMoved: 0,
    flowParked: 0,
    flowParkedLimited: 0,
    flowLeaseLost: settled.leaseLost ?? 0,
    authRejected,
    handled: decided.handled,
    handlerMicrosSum: decided.handlerMicrosSum,
    roundTrips,
    durationMs,
    stoppedForDeadline: decided.stoppedForDeadline,
    ...(claim.nextDueAt === undefined ? {} : { nextDueAt: claim.nextDueAt }),
  };
  return withClaim(report, claim);
}

export type { Decision };
