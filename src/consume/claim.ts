/**
 * The claim (SPEC §5.1 step 1), inside the byte budget: claim.lua reclaims from the shared
 * cursor and decides how the fresh entries are read (see its header). Its operations and
 * the decoding of their replies are separate steps, so a run can send a claim in the same
 * round trip as the settle of the round before (exchange.ts).
 *
 * Three ways to read fresh entries:
 * - `lua`: claim.lua reads them itself and hands back what does not fit. One script: REST
 *   clients (one billed command per claim) and a run's first claim read this way.
 * - `native`: claim.lua proves inside MULTI/EXEC that the read beside it fits, then the
 *   entries come from a plain XREADGROUP, never copied through Lua (TCP, after a first
 *   claim has loaded the script: a script Redis does not know inside MULTI only fails the
 *   claim, and the gate it did not open keeps the read from delivering anything).
 * - `none`: a reclaim only.
 */
import { rateSpacing, type ConsumerConfig } from './config';
import { flowKeyOf, parseEntries, type StreamEntry } from '../entry/entry';
import { RedisCommandError, ReplyShapeError } from '../ground/errors';
import { claimScript } from '../generated/lua-scripts';
import { command, type RedisCommand, type RedisReply } from '../redis/port';
import { asArray, asInteger, asText, isBytes } from '../redis/reply';
import type { Operation, ScriptCall } from '../redis/script';
import { sizeKeys } from '../entry/size-keys';
import { scheduleKeys } from '../entry/schedule-keys';
import { flowQueueKey, flowRateKey, flowReadyKey } from '../entry/keys';
import { retryArgs } from './retry';

export type FreshRead = 'lua' | 'native' | 'none';

/** What one claim asks for. */
export interface ClaimPlan {
  /** Fresh entries to read (0 with `read: 'none'`). */
  readonly fresh: number;
  /** XAUTOCLAIM COUNT; 0 leaves the reclaim out. */
  readonly reclaim: number;
  /** Bytes (ids, field names, values) this claim may return. */
  readonly allowance: number;
  /** The run holds no other entries: one entry larger than the allowance may come alone. */
  readonly alone: boolean;
  readonly read: FreshRead;
  /** Unique per claim (native reads): names the gate key that lets the read beside through. */
  readonly gate?: string;
  /** Flow leases (SPEC §5.7): the run's token and how long its leases last; absent without config `flow`. */
  readonly flow?: FlowLeasePlan;
}

export interface FlowLeasePlan {
  /** Names the run's holder of every key it leases: unique across the runs of every process. */
  readonly token: string;
  /** How long a lease taken by this claim lasts on the Redis clock: the run's deadline + overrun, less now. */
  readonly leaseMs: number;
  readonly limit: number;
  /** Strict per-key order: a dead run's pending entries become their key's heads. */
  readonly strict: boolean;
  /** Fair batches: most entries of one key a claim admits; undefined = no cap. */
  readonly share?: number;
}

export interface ClaimResult {
  /** Reclaimed entries first (they are older), then fresh ones. */
  readonly entries: StreamEntry[];
  readonly reclaimed: number;
  /** Pending ids whose entries were deleted before anyone acked them. */
  readonly deletedIds: string[];
  /** The cursor stored for the next reclaim; `0-0` when a full PEL pass finished; undefined when no reclaim ran. */
  readonly nextCursor: string | undefined;
  /** `reset` / `wrong_type` when the stored cursor could not be used (claim.lua's header). */
  readonly cursorNote: 'reset' | 'wrong_type' | undefined;
  /** Fresh entries the read asked for: the plan's, less what the rate limit and ready flow keys took of it. */
  readonly freshRequested: number;
  /** True when the byte allowance, not the stream or the PEL, left entries behind. */
  readonly cut: boolean;
  /** Bytes the claim counts against the run's budget (measured by Redis, or the proven bound of a native read). */
  readonly bytes: number;
  /**
   * The earliest due time (Redis clock, ms epoch) among the pending entries this claim saw and
   * left because they were not due yet (retry backoff, deferral, minIdle); undefined when none.
   * A poller woken then finds something to reclaim.
   */
  readonly nextDueAt?: number;
  /** The Redis clock (ms epoch) the claim judged due times by; undefined when it read none. */
  readonly redisNow?: number;
  /** Due scheduled events the claim moved into the stream before reading it (SPEC §5.6). */
  readonly scheduledMoved?: number;
  /** Entries the claim took and parked because their flow key was busy (never in `entries`). */
  readonly flowParked?: number;
  /** Of those, fresh ones: the read got that many more than `entries` shows. */
  readonly flowParkedFresh?: number;
  /** Of those, entries whose key's rate limit had no room or a hold kept it (front or queued behind): waiting on a limit. */
  readonly flowParkedLimited?: number;
  /** The rate limit let this claim take fewer entries than it asked for (config rateLimit). */
  readonly rateLimited?: boolean;
  /** Flow keys are still ready after this claim served or made some: the next claim has entries to serve. */
  readonly flowReadyMore?: boolean;
}

export const NOTHING_CLAIMED: ClaimResult = Object.freeze({
  entries: [],
  reclaimed: 0,
  deletedIds: [],
  nextCursor: undefined,
  cursorNote: undefined,
  freshRequested: 0,
  cut: false,
  bytes: 0,
});

/**
 * A fresh read that came back short of what it asked for, and not for bytes: the group has
 * nothing more unread — or the rate limit left no more room now, which a run treats alike.
 */
export function readShort(claim: ClaimResult): boolean {
  return !claim.cut && (claim.rateLimited === true || freshRead(claim) < claim.freshRequested);
}

/** Fresh entries the claim read, those parked behind a busy flow key included. */
export function freshRead(claim: ClaimResult): number {
  return claim.entries.length - claim.reclaimed + (claim.flowParkedFresh ?? 0);
}

function gateKey(stream: string, gate: string | undefined): string {
  // Every KEYS entry must share the stream's slot even when unused: the gate is named after the stream.
  return `${sizeKeys(stream).gatePrefix}${gate ?? '-'}`;
}

/**
 * Most due scheduled events one claim moves into the stream (SPEC §5.6, lib/schedule-move.lua):
 * a bounded script, however large the due backlog; the next claims move the rest.
 */
export const SCHEDULED_MOVES_PER_CLAIM = 100;

/** claim.lua's rate-limit arguments: T and τ in ms (0, 0: no limit). */
function rateArgs(rate: ConsumerConfig['rateLimit']): [number, number] {
  if (rate === undefined) return [0, 0];
  const { intervalMs, toleranceMs } = rateSpacing(rate);
  return [intervalMs, toleranceMs];
}

/**
 * claim.lua's call. `admit`: the call that admits a native read's entries with flow leases,
 * from their key records (claim.lua 'admit'), in place of the gate's DEL.
 */
function claimCall(config: ConsumerConfig, plan: ClaimPlan, admit = false): ScriptCall {
  const { stream, cursor, defer, flowLease } = config.keys;
  const sizes = sizeKeys(stream);
  const schedule = scheduleKeys(stream);
  return {
    script: claimScript,
    keys: [stream, cursor, sizes.counts, sizes.large, gateKey(stream, plan.gate), defer, schedule.due, schedule.entries, flowLease, flowReadyKey(flowLease), flowQueueKey(flowLease), flowRateKey(flowLease)],
    args: [
      config.group,
      config.consumer,
      config.minIdleMs,
      plan.reclaim,
      Math.floor(plan.allowance),
      plan.alone ? 1 : 0,
      plan.fresh,
      admit ? 'admit' : plan.read,
      ...retryArgs(config.retry),
      SCHEDULED_MOVES_PER_CLAIM,
      plan.flow?.token ?? '',
      Math.max(1, Math.floor(plan.flow?.leaseMs ?? 0)),
      plan.flow?.limit ?? 0,
      plan.flow?.strict === true ? 1 : 0,
      ...rateArgs(config.rateLimit),
      plan.flow?.share ?? 0,
      config.rateLimit?.key === 'flow' ? 1 : 0,
    ],
  };
}

export function claimOperations(config: ConsumerConfig, plan: ClaimPlan): Operation[] {
  if (plan.read !== 'native') return [claimCall(config, plan)];
  const { stream } = config.keys;
  const gate = gateKey(stream, plan.gate);
  return [
    command('MULTI'),
    claimCall(config, plan),
    command('XREADGROUP', 'GROUP', config.group, config.consumer, 'COUNT', plan.fresh, 'STREAMS', stream, gate, '>', '>'),
    // With flow leases the admit call takes the gate's DEL's place: it deletes the gate too.
    plan.flow === undefined ? command('DEL', gate) : claimCall(config, plan, true),
    command('EXEC'),
  ];
}

/** What a claim came back with: its result, or the error that refused it and what it took all the same. */
export type ClaimOutcome =
  | { readonly claim: ClaimResult }
  | { readonly error: RedisCommandError | Error; readonly taken: readonly StreamEntry[] };

/**
 * The claim's outcome from the replies of claimOperations(config, plan), in the same order.
 * claim.lua and the transaction around it are atomic, so a refused script took nothing; only
 * a native read failing after the script succeeded leaves entries taken (the reclaimed ones).
 */
export function claimOutcome(plan: ClaimPlan, replies: ReadonlyArray<RedisReply | RedisCommandError>): ClaimOutcome {
  const refused = (error: RedisCommandError | Error, taken: readonly StreamEntry[] = []): ClaimOutcome => ({ error, taken });
  try {
    if (plan.read !== 'native') {
      const reply = replies[0];
      return reply instanceof RedisCommandError ? refused(reply) : { claim: claimResultOf(plan, reply, undefined) };
    }
    const failed = replies.slice(0, 4).find((reply) => reply instanceof RedisCommandError);
    if (failed instanceof RedisCommandError) return refused(failed);
    const exec = replies[4];
    if (exec instanceof RedisCommandError) return refused(exec);
    if (exec == null) return refused(new RedisCommandError('EXEC', 'EXECABORT transaction discarded'));
    const [script, read, admit] = asArray(exec, 'claim transaction') as Array<RedisReply | RedisCommandError>;
    if (script instanceof RedisCommandError) return refused(script);
    const claim = claimResultOf(plan, script, read instanceof RedisCommandError ? undefined : read);
    if (read instanceof RedisCommandError && readThroughGate(script)) return refused(read, claim.entries);
    if (plan.flow === undefined) return { claim };
    // Not admitted, the native read's entries must not start: they stay pending until min idle.
    if (admit instanceof RedisCommandError) return refused(admit, claim.entries.slice(0, claim.reclaimed));
    const admitted = admitReplyOf(admit);
    const mismatch = readThroughGate(script) ? keyRecordMismatch(claim, admitted.keyRecords) : undefined;
    if (mismatch !== undefined) return refused(mismatch, claim.entries.slice(0, claim.reclaimed));
    return { claim: withAdmission(claim, admitted) };
  } catch (error) {
    // A reply of the wrong shape: what it took cannot be known (it stays pending until min idle).
    return refused(error as Error);
  }
}

/** claim.lua's 'admit' reply (see its header). */
interface AdmitReply {
  readonly parkedIds: readonly string[];
  readonly parkedLimited: number;
  readonly readyMore: boolean;
  readonly nextDueAt: number | undefined;
  /** Key records the read's window held. */
  readonly keyRecords: number;
}

function admitReplyOf(reply: RedisReply | undefined): AdmitReply {
  const [parkedList, parkedLimited, readyMore, nextDue, keyRecords] = asArray(reply, 'claim admit reply');
  return {
    parkedIds: asArray(parkedList, 'claim admit parked').map((id) => asText(id, 'claim admit parked id')),
    parkedLimited: asInteger(parkedLimited, 'claim admit parked limited'),
    readyMore: asInteger(readyMore, 'claim admit ready more') === 1,
    nextDueAt: optionalMs(nextDue, 'claim admit next due'),
    keyRecords: asInteger(keyRecords, 'claim admit key records'),
  };
}

/**
 * A guard behind the native read's proof: the admit call found as many key records in the
 * read's window as the read delivered entries naming a flow key. Otherwise some entry would be
 * handed over without its lease: none of the read starts (they stay pending until min idle).
 */
function keyRecordMismatch(claim: ClaimResult, records: number): ReplyShapeError | undefined {
  let keyed = 0;
  for (let i = claim.reclaimed; i < claim.entries.length; i += 1) if (flowKeyOf(claim.entries[i]!) !== undefined) keyed += 1;
  return keyed === records ? undefined : new ReplyShapeError(`claim admit: the native read delivered ${keyed} entries naming a flow key, its window held ${records} key records`);
}

/**
 * A native read's claim after its admit call (claim.lua 'admit'): the entries it parked
 * behind a busy flow key leave the batch (put back in Redis already), and its counts join
 * the claim's.
 */
function withAdmission(claim: ClaimResult, admitted: AdmitReply): ClaimResult {
  const { parkedIds, parkedLimited, readyMore, nextDueAt } = admitted;
  if (parkedIds.length === 0 && parkedLimited === 0 && !readyMore && nextDueAt === undefined) return claim;
  const parked = new Set(parkedIds);
  const entries = parked.size === 0 ? claim.entries : claim.entries.filter((entry, i) => i < claim.reclaimed || !parked.has(entry.id));
  return {
    ...claim,
    entries,
    flowParked: (claim.flowParked ?? 0) + parked.size,
    flowParkedFresh: (claim.flowParkedFresh ?? 0) + parked.size,
    flowParkedLimited: (claim.flowParkedLimited ?? 0) + parkedLimited,
    flowReadyMore: claim.flowReadyMore === true || readyMore,
    nextDueAt: claim.nextDueAt === undefined || (nextDueAt !== undefined && nextDueAt < claim.nextDueAt) ? nextDueAt : claim.nextDueAt,
  };
}

/** True when claim.lua let the native read beside it through (fresh_via 'native'). */
function readThroughGate(script: RedisReply | undefined): boolean {
  return asText(asArray(script, 'claim reply')[5], 'claim fresh read') === 'native';
}

/**
 * Decodes claim.lua's reply and, for a native read, the XREADGROUP's. A native read the
 * script did not let through answers NOGROUP (its gate was never opened): expected, and
 * its entries, if any, are in the script's reply.
 */
function claimResultOf(plan: ClaimPlan, script: RedisReply | undefined, read: RedisReply | undefined): ClaimResult {
  const [cursor, claimedList, deletedList, countList, note, via, freshList, cut, bytes, nextDue, now, idleList, moved, parked, parkedFresh, rateLimited, freshAsked, readyMore, parkedLimited] = asArray(script, 'claim reply');
  const counts = asArray(countList, 'claim delivery counts');
  const idles = asArray(idleList, 'claim idle times');
  const reclaimed = parseEntries(claimedList, (i) => asInteger(counts[i], 'delivery count'), true).map(
    (entry, i): StreamEntry => ({ ...entry, idleBeforeClaimMs: asInteger(idles[i], 'idle before claim') }),
  );
  const readVia = asText(via, 'claim fresh read');
  let fresh: StreamEntry[] = [];
  if (readVia === 'lua') fresh = parseEntries(freshList, () => 1, false);
  if (readVia === 'native' && read != null) fresh = parseEntries(streamEntriesOf(read), () => 1, false);
  const noteText = asText(note, 'cursor note');
  const cursorText = asText(cursor, 'claim cursor');
  return {
    entries: reclaimed.length === 0 ? fresh : fresh.length === 0 ? reclaimed : [...reclaimed, ...fresh],
    reclaimed: reclaimed.length,
    deletedIds: asArray(deletedList ?? [], 'deleted ids').map((id) => asText(id, 'deleted id')),
    nextCursor: plan.reclaim > 0 ? cursorText : undefined,
    cursorNote: noteText === 'reset' || noteText === 'wrong_type' ? noteText : undefined,
    freshRequested: asInteger(freshAsked, 'claim fresh asked'),
    cut: asInteger(cut, 'claim cut') === 1,
    bytes: asInteger(bytes, 'claim bytes'),
    nextDueAt: optionalMs(nextDue, 'claim next due'),
    redisNow: optionalMs(now, 'claim clock'),
    scheduledMoved: asInteger(moved, 'claim scheduled moved'),
    flowParked: asInteger(parked, 'claim flow parked'),
    flowParkedFresh: asInteger(parkedFresh, 'claim flow parked fresh'),
    flowParkedLimited: asInteger(parkedLimited, 'claim flow parked limited'),
    rateLimited: asInteger(rateLimited, 'claim rate limited') === 1,
    flowReadyMore: asInteger(readyMore, 'claim flow ready more') === 1,
  };
}

/** A time in ms, or '' for none. */
function optionalMs(reply: RedisReply | undefined, what: string): number | undefined {
  return isBytes(reply) && reply.length === 0 ? undefined : asInteger(reply, what);
}

/** XREADGROUP replies `[[stream, entries], ...]`; only the stream has entries (the gate never does). */
function streamEntriesOf(reply: RedisReply): RedisReply | undefined {
  const [perStream] = asArray(reply, 'XREADGROUP reply');
  return asArray(perStream, 'XREADGROUP stream')[1];
}

/**
 * The wait of a continuous run over TCP (SPEC §5.1 "Blocking reads"): one entry, so that what
 * wakes the run is within the byte budget whatever its size; the entries after it are
 * claimed as usual. Sent on the port's blocking connection, never on the shared one.
 */
export function waitCommand(config: ConsumerConfig, blockMs: number): RedisCommand {
  return command('XREADGROUP', 'GROUP', config.group, config.consumer, 'COUNT', 1, 'BLOCK', Math.max(1, Math.ceil(blockMs)), 'STREAMS', config.keys.stream, '>');
}

/** The entry a wait delivered (none when it timed out or was interrupted). */
export function waitedEntries(reply: RedisReply): StreamEntry[] {
  return reply == null ? [] : parseEntries(streamEntriesOf(reply), () => 1, false);
}
