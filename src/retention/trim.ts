/**
 * Safe trim (SPEC §7): delete only the entries every consumer group has read and acked,
 * in one trim.lua call. Never `MAXLEN ~`, which can drop unacknowledged entries.
 */
import { ReplyShapeError } from '../errors';
import { trimScript } from '../generated/lua-scripts';
import type { RedisPort } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import { runScript } from '../redis/script';

/** Why a trim did or did not delete: `trimmed` ran XTRIM (possibly removing 0 entries). */
export type TrimStatus = 'trimmed' | 'no_stream' | 'no_groups' | 'bad_evidence';

export interface TrimResult {
  readonly removed: number;
  /** The MINID trimmed at; undefined when nothing was attempted. */
  readonly frontier: string | undefined;
  readonly status: TrimStatus;
}

const STATUSES: readonly string[] = ['trimmed', 'no_stream', 'no_groups', 'bad_evidence'] satisfies TrimStatus[];

export async function safeTrim(port: RedisPort, stream: string): Promise<TrimResult> {
  const reply = await runScript(port, { script: trimScript, keys: [stream], args: [] });
  const [removed, frontier, status] = asArray(reply, 'trim reply');
  const statusText = asText(status, 'trim status');
  if (!STATUSES.includes(statusText)) throw new ReplyShapeError('trim status');
  const frontierText = asText(frontier, 'trim frontier');
  return {
    removed: asInteger(removed, 'trim removed'),
    frontier: frontierText === '' ? undefined : frontierText,
    status: statusText as TrimStatus,
  };
}
