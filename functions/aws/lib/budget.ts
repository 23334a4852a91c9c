/**
 * Time budgets of the Lambda functions, in one place for the handlers (deadline, refusal)
 * and the CDK stack (function timeouts). A poll run's deadline is Lambda's remaining time
 * minus POLL_RESERVE_MS; the function timeout is the longest run budget plus the same
 * reserve and a start-up allowance, so `minIdleMs > timeout` is checked against the very
 * numbers the handler runs with.
 */
import type { ConsumerConfig } from '../../../src/consume/config';
import { RunDeadlineTooCloseError } from '../../../src/ground/errors';
import { MIN_HANDLER_WINDOW_MS } from '../../../src/consume/run';

/** Kept back from Lambda's remaining time: writing the report line and returning. */
export const POLL_RESERVE_MS = 1_000;
/** What precedes the first round in a cold container: secrets, connecting, ensuring groups. */
export const STARTUP_ALLOWANCE_MS = 2_000;
/** Trim holds no entries, so it has no minIdle bound: a fixed ceiling. */
export const TRIM_TIMEOUT_MS = 60_000;
/** One publish request (the publisher's own Redis timeout is 5 s by default). */
export const PUBLISH_TIMEOUT_MS = 15_000;
/** Lambda's hard limit on a function timeout. */
export const LAMBDA_MAX_TIMEOUT_MS = 900_000;

/** Remaining time below which a poll run does not start: reserve + settle reserve + a handler window. */
export function requiredRemainingMs(configs: readonly ConsumerConfig[]): number {
  const settle = Math.max(0, ...configs.map((c) => c.settleReserveMs));
  return POLL_RESERVE_MS + settle + MIN_HANDLER_WINDOW_MS;
}

/**
 * Throws RunDeadlineTooCloseError when a run could not do useful work in the time left.
 * Called before anything connects or sends a Redis command.
 */
export function assertCanStart(remainingMs: number, configs: readonly ConsumerConfig[]): void {
  const required = requiredRemainingMs(configs);
  if (remainingMs < required) throw new RunDeadlineTooCloseError(remainingMs, required);
}

/** Epoch ms by which the run must have settled everything. */
export function pollDeadline(nowMs: number, remainingMs: number): number {
  return nowMs + remainingMs - POLL_RESERVE_MS;
}

/** Timeout (whole seconds, in ms) of a function polling these consumers. */
export function pollTimeoutMs(configs: readonly ConsumerConfig[]): number {
  const budget = Math.max(0, ...configs.map((c) => c.runBudgetMs));
  return Math.ceil((budget + STARTUP_ALLOWANCE_MS + POLL_RESERVE_MS) / 1_000) * 1_000;
}
