/**
 * Safe trim (SPEC §7): delete only the entries every consumer group has read and acked,
 * in one call of retention.lua (its trim part). Never `MAXLEN ~`, which can drop unacknowledged entries. With a
 * limit, a stream longer than it is trimmed with `MINID ~ <frontier> LIMIT n` (whole
 * macro nodes below the frontier, at most n entries), so one call on a large backlog never
 * blocks Redis for long; shorter streams are trimmed exactly.
 */
import { ConfigError, ReplyShapeError } from '../ground/errors';
import type { RedisPort, RedisReply } from '../redis/port';
import { asInteger, asText } from '../redis/reply';
import { runScript } from '../redis/script';
import { partOrThrow, retentionCall } from './retention-call';

/** Why a trim did or did not delete: `trimmed` ran XTRIM (possibly removing 0 entries). */
export type TrimStatus = 'trimmed' | 'no_stream' | 'no_groups' | 'bad_evidence';

export interface TrimResult {
  readonly removed: number;
  /** The MINID trimmed at; undefined when nothing was attempted. */
  readonly frontier: string | undefined;
  readonly status: TrimStatus;
  /** `approximate` when the stream was longer than the limit (MINID ~ … LIMIT); undefined when nothing was attempted. */
  readonly mode: 'exact' | 'approximate' | undefined;
}

export interface TrimOptions {
  /** Most entries one call removes from a stream longer than this; 0 or undefined: exact and unbounded. */
  readonly limit?: number;
}

const STATUSES: readonly string[] = ['trimmed', 'no_stream', 'no_groups', 'bad_evidence'] satisfies TrimStatus[];
const MODES: readonly string[] = ['exact', 'approximate', ''];

export async function safeTrim(port: RedisPort, stream: string, options: TrimOptions = {}): Promise<TrimResult> {
  const limit = options.limit ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 0) throw new ConfigError('safe trim', [{ path: 'limit', message: 'must be a non-negative integer' }]);
  return trimResultOf(await runScript(port, retentionCall(stream, { trim: { limit } })));
}

/** The trim part of a retention.lua reply; its error thrown. */
export function trimResultOf(reply: RedisReply): TrimResult {
  const [removed, frontier, status, mode] = partOrThrow(reply, 'trim');
  const modeText = asText(mode, 'trim mode');
  if (!MODES.includes(modeText)) throw new ReplyShapeError('trim mode');
  const statusText = asText(status, 'trim status');
  if (!STATUSES.includes(statusText)) throw new ReplyShapeError('trim status');
  const frontierText = asText(frontier, 'trim frontier');
  return {
    removed: asInteger(removed, 'trim removed'),
    frontier: frontierText === '' ? undefined : frontierText,
    status: statusText as TrimStatus,
    mode: modeText === '' ? undefined : (modeText as 'exact' | 'approximate'),
  };
}
