/**
 * DLT retention (SPEC §7): drop dead-letter records older than the window, by a time-based
 * MINID computed from the Redis clock inside retention.lua (its DLT part).
 */
import { ConfigError } from '../ground/errors';
import type { RedisPort, RedisReply } from '../redis/port';
import { asInteger } from '../redis/reply';
import { runScript } from '../redis/script';
import { partOrThrow, retentionCall } from './retention-call';

export interface DeadLetterTrimResult {
  readonly removed: number;
  /** Records written before this ms epoch (Redis clock) were eligible; 0 when none could be. */
  readonly cutoffMs: number;
}

/**
 * Low level: no config check. Use a parsed RetentionConfig (parseRetentionConfig) so the
 * window is known not to be shorter than the marker TTL.
 */
export async function trimDeadLetters(port: RedisPort, dlt: string, retentionSeconds: number): Promise<DeadLetterTrimResult> {
  if (!Number.isInteger(retentionSeconds) || retentionSeconds <= 0) {
    throw new ConfigError('dead-letter retention', [{ path: 'retentionSeconds', message: 'must be a positive integer' }]);
  }
  return deadLetterTrimOf(await runScript(port, retentionCall(dlt, { deadLetters: { dlt, retentionSeconds } })));
}

/** The DLT part of a retention.lua reply; its error thrown. */
export function deadLetterTrimOf(reply: RedisReply): DeadLetterTrimResult {
  const [removed, cutoff] = partOrThrow(reply, 'dlt');
  return { removed: asInteger(removed, 'dlt-trim removed'), cutoffMs: asInteger(cutoff, 'dlt-trim cutoff') };
}
