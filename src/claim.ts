/**
 * The claim round trip (SPEC §5.1 step 1): claim.lua (cursor + XAUTOCLAIM) and the fresh
 * non-blocking XREADGROUP pipelined beside it, so fresh payloads never pass through Lua.
 * A run may leave out the reclaim (SPEC §5.1 "Reclaim cadence") and may send the claim in
 * the same round trip as the previous round's settle: the operations and the decoding of
 * their replies are therefore separate steps.
 */
import type { ConsumerConfig } from './config';
import { parseEntries, type StreamEntry } from './entry';
import { EntryFields } from './entry-fields';
import { claimScript } from './generated/lua-scripts';
import { command, type RedisPort, type RedisReply } from './redis/port';
import { asArray, asInteger, asText } from './redis/reply';
import { runOperations, type Operation } from './redis/script';

export interface ClaimResult {
  /** Reclaimed entries first (they are older), then fresh ones. */
  readonly entries: StreamEntry[];
  readonly reclaimed: number;
  /** Pending ids whose entries were deleted before anyone acked them. */
  readonly deletedIds: string[];
  /** The cursor stored for the next round; `0-0` when a full PEL pass finished; undefined when no reclaim ran. */
  readonly nextCursor: string | undefined;
  /** Fresh entries asked for; a fresh read that returns fewer came back short. */
  readonly freshRequested: number;
  /** Bytes of ids, field names and values across all entries (the reply's payload, roughly; estimated from a sample). */
  readonly bytes: number;
}

/** What one claim asks for: how many fresh entries, and whether (and how many) to reclaim. */
export interface ClaimPlan {
  readonly fresh: number;
  /** 0 leaves XAUTOCLAIM out of this claim. */
  readonly reclaim: number;
  /**
   * Continuous mode, TCP: the fresh read waits up to this many ms for entries (`XREADGROUP
   * … BLOCK`). An entry appended meanwhile is delivered to the waiting run in the reply
   * that wakes it — no second round trip to claim it — and entries other consumers of the
   * group take never wake it. Only in a claim without XAUTOCLAIM.
   */
  readonly blockMs?: number;
}

export function fullClaimPlan(config: ConsumerConfig): ClaimPlan {
  return { fresh: config.batch, reclaim: config.reclaimBatch };
}

export function claimOperations(config: ConsumerConfig, plan: ClaimPlan): Operation[] {
  const { keys } = config;
  const ops: Operation[] = [];
  if (plan.reclaim > 0) {
    ops.push({
      script: claimScript,
      keys: [keys.stream, keys.cursor],
      args: [config.group, config.consumer, config.minIdleMs, plan.reclaim],
    });
  }
  const block = plan.blockMs === undefined ? [] : ['BLOCK', Math.max(1, Math.ceil(plan.blockMs))];
  ops.push(command('XREADGROUP', 'GROUP', config.group, config.consumer, 'COUNT', plan.fresh, ...block, 'STREAMS', keys.stream, '>'));
  return ops;
}

/** Decodes the replies of claimOperations(config, plan), in the same order. */
export function claimResultOf(plan: ClaimPlan, replies: readonly RedisReply[]): ClaimResult {
  let reclaimed: StreamEntry[] = [];
  let deletedIds: string[] = [];
  let nextCursor: string | undefined;
  if (plan.reclaim > 0) {
    const [cursor, claimedList, deletedList, countList] = asArray(replies[0], 'claim reply');
    const counts = asArray(countList, 'claim delivery counts');
    reclaimed = parseEntries(claimedList, (i) => asInteger(counts[i], 'delivery count'), true);
    deletedIds = asArray(deletedList ?? [], 'deleted ids').map((id) => asText(id, 'deleted id'));
    nextCursor = asText(cursor, 'claim cursor');
  }
  const freshReply = replies[plan.reclaim > 0 ? 1 : 0];
  const fresh = freshReply == null ? [] : parseEntries(streamEntriesOf(freshReply), () => 1, false);
  const entries = reclaimed.length === 0 ? fresh : [...reclaimed, ...fresh];
  return {
    entries,
    bytes: entryBytes(entries),
    reclaimed: reclaimed.length,
    deletedIds,
    nextCursor,
    freshRequested: plan.fresh,
  };
}

/**
 * The entries a claim did take when part of it failed (e.g. the reclaim went through and the
 * fresh read answered an error): each reply decoded on its own, failed ones skipped. A failing
 * run releases these, so a half-failed claim strands nothing until minIdle (SPEC §5.1 (b)).
 */
export function claimedDespiteErrors(plan: ClaimPlan, replies: readonly unknown[]): StreamEntry[] {
  const freshSlot = plan.reclaim > 0 ? 1 : 0;
  // Each slot decoded as if it were the claim's only answer (a null fresh reply reads as none).
  const slots: Array<[ClaimPlan, unknown[]]> = [[{ ...plan, reclaim: 0 }, [replies[freshSlot]]]];
  if (freshSlot === 1) slots.unshift([plan, [replies[0], null]]);
  return slots.flatMap(([slotPlan, slotReplies]) => {
    if (slotReplies[0] === undefined || slotReplies[0] instanceof Error) return [];
    try {
      return claimResultOf(slotPlan, slotReplies as RedisReply[]).entries;
    } catch {
      return [];
    }
  });
}

export async function claimEntries(port: RedisPort, config: ConsumerConfig, plan = fullClaimPlan(config)): Promise<ClaimResult> {
  return claimResultOf(plan, await runOperations(port, claimOperations(config, plan)));
}

/** Entries whose sizes are summed to estimate a batch's bytes (the byte budget needs a mean, not an exact sum). */
const SIZE_SAMPLE = 16;

/**
 * Bytes of the entries, estimated from at most SIZE_SAMPLE of them spread over the batch:
 * summing every field of every entry showed up at ~3 % of the loop's CPU on small entries.
 */
function entryBytes(entries: readonly StreamEntry[]): number {
  if (entries.length === 0) return 0;
  const stride = Math.ceil(entries.length / SIZE_SAMPLE);
  let sampled = 0;
  let bytes = 0;
  for (let i = 0; i < entries.length; i += stride) {
    const entry = entries[i]!;
    bytes += entry.id.length;
    bytes += fieldBytes(entry.fields);
    sampled += 1;
  }
  return Math.round((bytes / sampled) * entries.length);
}

function fieldBytes(fields: ReadonlyMap<string, Uint8Array>): number {
  // Parsed entries hold EntryFields, which sums without building a Map to iterate.
  if (fields instanceof EntryFields) return fields.byteSize();
  let bytes = 0;
  for (const [name, value] of fields) bytes += name.length + value.byteLength;
  return bytes;
}

/** XREADGROUP replies `[[stream, entries]]` for the one stream it was asked about. */
function streamEntriesOf(reply: RedisReply): RedisReply | undefined {
  const [perStream] = asArray(reply, 'XREADGROUP reply');
  return asArray(perStream, 'XREADGROUP stream')[1];
}
