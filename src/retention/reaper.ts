/**
 * Consumer reaper (SPEC §7): delete consumers with zero pending entries that have been
 * inactive longer than a threshold. The check and the delete happen inside retention.lua
 * (its reaper part), because XGROUP DELCONSUMER would drop a consumer's pending entries with
 * it. Inactive means the same on Redis and Valkey: the time since the consumer last got an
 * entry (read or claimed) — `inactive` where XINFO CONSUMERS has it, else Redis 7.0's
 * `idle` (see the script's header).
 */
import type { RedisPort, RedisReply } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import { runScript } from '../redis/script';
import { partOrThrow, retentionCall } from './retention-call';

export interface ReapOptions {
  /** Only consumers inactive strictly longer than this are deleted. */
  readonly idleMs: number;
  /** At most this many deletions per call. */
  readonly maxPerRun: number;
  /** Groups to reap; undefined = every group on the stream. */
  readonly groups?: readonly string[] | undefined;
}

export interface ReapedConsumer {
  readonly group: string;
  readonly consumer: string;
}

export interface ReapResult {
  readonly deleted: readonly ReapedConsumer[];
  /** Consumers past the threshold kept because they still hold pending entries. */
  readonly busyIdle: number;
}

export async function reapConsumers(port: RedisPort, stream: string, options: ReapOptions): Promise<ReapResult> {
  return reapResultOf(await runScript(port, retentionCall(stream, { reaper: options })));
}

/** The reaper part of a retention.lua reply; its error thrown. */
export function reapResultOf(reply: RedisReply): ReapResult {
  const [deletedFlat, busyIdle] = partOrThrow(reply, 'reap');
  const flat = asArray(deletedFlat, 'reap deleted');
  const deleted: ReapedConsumer[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    deleted.push({ group: asText(flat[i], 'reaped group'), consumer: asText(flat[i + 1], 'reaped consumer') });
  }
  return { deleted, busyIdle: asInteger(busyIdle, 'reap busy idle') };
}
