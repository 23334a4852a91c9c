/**
 * One retention pass over a stream, as a scheduled trim function runs it: safe trim, DLT
 * retention and the consumer reaper. The three scripts touch disjoint concerns and are
 * independent, so they are sent together; each is atomic on its own.
 */
import type { RedisPort } from '../redis/port';
import type { RetentionConfig } from './config';
import { trimDeadLetters, type DeadLetterTrimResult } from './dead-letters';
import { reapConsumers, type ReapResult } from './reaper';
import { safeTrim, type TrimResult } from './trim';

export interface RetentionReport {
  readonly stream: TrimResult;
  readonly deadLetters: DeadLetterTrimResult;
  readonly consumers: ReapResult;
}

export async function runRetention(port: RedisPort, config: RetentionConfig): Promise<RetentionReport> {
  const [stream, deadLetters, consumers] = await Promise.all([
    safeTrim(port, config.stream, { limit: config.trimLimit }),
    trimDeadLetters(port, config.dlt, config.dltRetentionSeconds),
    reapConsumers(port, config.stream, config.reaper),
  ]);
  return { stream, deadLetters, consumers };
}
