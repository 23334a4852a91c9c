/**
 * The claim round trip (SPEC §5.1 step 1): claim.lua (cursor + XAUTOCLAIM) and the fresh
 * non-blocking XREADGROUP pipelined beside it, so fresh payloads never pass through Lua.
 */
import type { ConsumerConfig } from './config';
import { parseEntries, type StreamEntry } from './entry';
import { claimScript } from './generated/lua-scripts';
import { command, type RedisPort, type RedisReply } from './redis/port';
import { asArray, asInteger, asText } from './redis/reply';
import { runOperations } from './redis/script';

export interface ClaimResult {
  /** Reclaimed entries first (they are older), then fresh ones. */
  readonly entries: StreamEntry[];
  readonly reclaimed: number;
  /** Pending ids whose entries were deleted before anyone acked them. */
  readonly deletedIds: string[];
  /** The cursor stored for the next round; `0-0` when a full PEL pass finished. */
  readonly nextCursor: string;
}

export async function claimEntries(port: RedisPort, config: ConsumerConfig): Promise<ClaimResult> {
  const { keys } = config;
  const [claimReply, freshReply] = await runOperations(port, [
    {
      script: claimScript,
      keys: [keys.stream, keys.cursor],
      args: [config.group, config.consumer, config.minIdleMs, config.reclaimBatch],
    },
    command('XREADGROUP', 'GROUP', config.group, config.consumer, 'COUNT', config.batch, 'STREAMS', keys.stream, '>'),
  ]);

  const [cursor, claimedList, deletedList, countList] = asArray(claimReply, 'claim reply');
  const counts = asArray(countList, 'claim delivery counts');
  const reclaimed = parseEntries(claimedList, (i) => asInteger(counts[i], 'delivery count'), true);
  const fresh = freshReply == null ? [] : parseEntries(streamEntriesOf(freshReply), () => 1, false);
  return {
    entries: [...reclaimed, ...fresh],
    reclaimed: reclaimed.length,
    deletedIds: asArray(deletedList ?? [], 'deleted ids').map((id) => asText(id, 'deleted id')),
    nextCursor: asText(cursor, 'claim cursor'),
  };
}

/** XREADGROUP replies `[[stream, entries]]` for the one stream it was asked about. */
function streamEntriesOf(reply: RedisReply): RedisReply | undefined {
  const [perStream] = asArray(reply, 'XREADGROUP reply');
  return asArray(perStream, 'XREADGROUP stream')[1];
}
