/**
 * The run loop's one exchange codec: what a round trip sends (the settles of decided
 * rounds, the entries put back, the next claim) and what came back, part by part. Every
 * part is decoded on its own, so a failure of one never hides what another did: a claim
 * that went through beside a failed settle still reports the entries it took (the run
 * gives them back), and a settle answered beside a failed claim still counts.
 *
 * It never rejects: the loop has handlers running while an exchange is out, and a rejection
 * nobody awaits yet would be unhandled.
 *
 * With config `durability`, an exchange that settles ends with WAITAOF / WAIT (they cannot run
 * in a script, and cover every write sent before them on the connection). A wait that falls
 * short leaves the settles done — an ack cannot be taken back — and marks them unconfirmed.
 */
import { claimOperations, claimOutcome, type ClaimPlan, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import type { StreamEntry } from '../entry/entry';
import { RedisCommandError } from '../ground/errors';
import type { RedisPort, RedisReply } from '../redis/port';
import { asInteger } from '../redis/reply';
import { runOperationsSettled, type Operation, type ScriptCall } from '../redis/script';
import { durabilityCommands, durabilityOutcome } from '../redis/durability';
import { settleResultOf, unconfirmedSettle, type SettleResult } from './settle';

export interface ExchangeRequest {
  /** settle.lua calls, one per decided round (replayed settles are idempotent). */
  readonly settles?: ReadonlyArray<ScriptCall>;
  /** release.lua: entries any run may take at once. */
  readonly release?: ScriptCall;
  /** release.lua: entries held behind their ordering key, put back as they were. */
  readonly hold?: ScriptCall;
  readonly claim?: ClaimPlan;
}

export interface ExchangeOutcome {
  /** One per settle sent, in order: what Redis did, or undefined when it failed. */
  readonly settled: ReadonlyArray<SettleResult | undefined>;
  readonly released: number;
  readonly held: number;
  /** The claim's result, when it was sent and went through. */
  readonly claim: ClaimResult | undefined;
  /** Entries a failed claim took all the same: never started, to be given back. */
  readonly taken: readonly StreamEntry[];
  /** The first failure, if any part failed (undefined: everything answered). */
  readonly error: unknown;
  /** Why the claim brought nothing back (its own refusal, or the round trip failing); undefined when it did. */
  readonly claimError: unknown;
}

const NOTHING_TAKEN: readonly StreamEntry[] = Object.freeze([]);

export async function exchange(port: RedisPort, config: ConsumerConfig, request: ExchangeRequest): Promise<ExchangeOutcome> {
  const settles = request.settles ?? [];
  const puts = [request.release, request.hold];
  const ops: Operation[] = [...settles];
  for (const put of puts) if (put !== undefined) ops.push(put);
  const claimOps = request.claim === undefined ? [] : claimOperations(config, request.claim);
  ops.push(...claimOps);
  if (ops.length === 0) return { settled: [], released: 0, held: 0, claim: undefined, taken: NOTHING_TAKEN, error: undefined, claimError: undefined };

  const durability = settles.length > 0 ? config.durability : undefined;
  const waits = durability === undefined ? [] : durabilityCommands(durability);
  let replies: Array<RedisReply | RedisCommandError>;
  try {
    replies = await runOperationsSettled(port, ops, waits);
  } catch (error) {
    // Nothing is known: a claim in it may have taken entries, which stay pending until minIdle (as after a crash).
    return { settled: settles.map(() => undefined), released: 0, held: 0, claim: undefined, taken: NOTHING_TAKEN, error, claimError: error };
  }

  let error: unknown;
  let slot = 0;
  const next = (): RedisReply | RedisCommandError => replies[slot++]!;
  const confirmed = durability === undefined || durabilityOutcome(durability, replies.slice(ops.length)).confirmed;
  const settled = settles.map(() => {
    const reply = next();
    if (reply instanceof RedisCommandError) return void (error ??= reply);
    const result = decoded(() => settleResultOf(reply), (e) => (error ??= e));
    return result === undefined || confirmed ? result : unconfirmedSettle(result);
  });
  const [released, held] = puts.map((put) => {
    if (put === undefined) return 0;
    const reply = next();
    if (reply instanceof RedisCommandError) return void (error ??= reply), 0;
    return decoded(() => asInteger(reply, 'release reply'), (e) => (error ??= e)) ?? 0;
  }) as [number, number];
  let claim: ClaimResult | undefined;
  let claimError: unknown;
  let taken = NOTHING_TAKEN;
  if (request.claim !== undefined) {
    const outcome = claimOutcome(request.claim, replies.slice(slot, ops.length));
    if ('claim' in outcome) claim = outcome.claim;
    else {
      claimError = outcome.error;
      error ??= outcome.error;
      taken = outcome.taken;
    }
  }
  return { settled, released, held, claim, taken, error, claimError };
}

function decoded<T>(decode: () => T, failed: (error: unknown) => void): T | undefined {
  try {
    return decode();
  } catch (error) {
    failed(error);
    return undefined;
  }
}
