/**
 * DLT retention (SPEC §7): drop dead-letter records older than the window, by a time-based
 * MINID computed from the Redis clock inside dlt-trim.lua.
 */
import { ConfigError } from '../ground/errors';
import { dltTrimScript } from '../generated/lua-scripts';
import type { RedisPort } from '../redis/port';
import { asArray, asInteger } from '../redis/reply';
import { runScript } from '../redis/script';

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
  const reply = await runScript(port, { script: dltTrimScript, keys: [dlt], args: [retentionSeconds] });
  const [removed, cutoff] = asArray(reply, 'dlt-trim reply');
  return { removed: asInteger(removed, 'dlt-trim removed'), cutoffMs: asInteger(cutoff, 'dlt-trim cutoff') };
}
