/**
 * One retention pass over a stream, as a scheduled trim function runs it: the move of due
 * scheduled events, safe trim, DLT retention and the consumer reaper in one retention.lua call (SPEC §10: an idle trim costs
 * one billed command per stream). Each part keeps its own guarantee and runs whatever the
 * others met; a part that failed fails the pass, after the others ran.
 */
import type { RedisPort } from '../redis/port';
import { runScript } from '../redis/script';
import type { RetentionConfig } from './config';
import { deadLetterTrimOf, type DeadLetterTrimResult } from './dead-letters';
import { reapResultOf, type ReapResult } from './reaper';
import { partOrThrow, retentionCall } from './retention-call';
import { DEFAULT_MAX_MOVED, moveResultOf, type MoveResult } from '../schedule/move';
import { trimResultOf, type TrimResult } from './trim';

export interface RetentionReport {
  readonly stream: TrimResult;
  readonly deadLetters: DeadLetterTrimResult;
  readonly consumers: ReapResult;
  /** Due scheduled events moved into the stream by this pass (SPEC §5.6), and the next due time. */
  readonly schedule: MoveResult;
}

export async function runRetention(port: RedisPort, config: RetentionConfig): Promise<RetentionReport> {
  const reply = await runScript(
    port,
    retentionCall(config.stream, {
      trim: { limit: config.trimLimit },
      deadLetters: { dlt: config.dlt, retentionSeconds: config.dltRetentionSeconds },
      reaper: config.reaper,
      move: { maxMoved: DEFAULT_MAX_MOVED },
    }),
  );
  return { stream: trimResultOf(reply), deadLetters: deadLetterTrimOf(reply), consumers: reapResultOf(reply), schedule: moveResultOf(partOrThrow(reply, 'move')) };
}
