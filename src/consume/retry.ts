/**
 * Retry backoff (SPEC §5.6): how long a retained entry waits after its last delivery before
 * it may be delivered again. claim.lua decides it, on the Redis clock, in `retry_after` —
 * the one place that judges an entry due. This module holds the policy's shape and bounds,
 * and `retryAfterMs`, the same function in TypeScript for what only displays a due time
 * (the backlog probe, the dashboard): never for deciding that an entry may be taken. It
 * follows the script operation for operation (a loop of multiplications, no `pow`, the same
 * hash), so both give the same integer; test/redis/retry-backoff.test.ts holds them to it.
 */
import { MAX_RETRY_DELAY_MS } from '../verdict/verdict';

export { MAX_RETRY_DELAY_MS };

export type BackoffKind = 'fixed' | 'exponential';

/** A consumer's retry policy, every field resolved (config.ts fills the defaults). */
export interface RetryPolicy {
  readonly backoff: BackoffKind;
  /** The wait after the first delivery (exponential) or after every delivery (fixed), ms; ≥ minIdleMs. */
  readonly baseMs: number;
  /** Exponential: each further delivery multiplies the wait by this. */
  readonly factor: number;
  /** Exponential: the wait never exceeds this, ms. */
  readonly maxMs: number;
  /** 0..1: each wait is shortened by up to this fraction (never below minIdleMs), the same for every run. */
  readonly jitter: number;
}

/**
 * The default cap of an exponential backoff: 15 minutes. A saga step waiting on a downstream
 * that is down resumes at most 15 minutes after it comes back (the wait of one attempt), the
 * same horizon as an SQS message's longest delay; an outage of hours then costs 4 attempts an
 * hour per entry instead of one every minIdle.
 */
export const DEFAULT_RETRY_MAX_MS = 15 * 60_000;
export const DEFAULT_RETRY_FACTOR = 2;
/** Spreads the retries of entries that failed together (an outage) over the last fifth of each wait. */
export const DEFAULT_RETRY_JITTER = 0.2;
/** Factor bounds: above 1 by enough that the script's loop to the cap stays short (≤ ~200 steps). */
export const MIN_RETRY_FACTOR = 1.1;
export const MAX_RETRY_FACTOR = 10;

/** Longest loop of the wait's multiplications (claim.lua caps it too): the cap is reached long before. */
const MAX_STEPS = 2_000;
const PRIME = 2_147_483_647;
const MIX = 48_271;

/**
 * A number in [0, 1) from the entry id and its delivery count, the same in every run and in
 * claim.lua's `unit_hash` (a multiplicative hash mod 2^31−1, then two Lehmer steps; every
 * intermediate below 2^53, so exact in doubles).
 */
export function unitHash(id: string, deliveries: number): number {
  let h = (deliveries % PRIME) + 1;
  for (let i = 0; i < id.length; i += 1) h = (h * 31 + id.charCodeAt(i)) % PRIME;
  h = (h * MIX) % PRIME;
  h = (h * MIX) % PRIME;
  return h / PRIME;
}

/**
 * The least idle time (ms since its last delivery) after which an entry delivered
 * `deliveries` times may be reclaimed: minIdleMs for a count below 1 (a released entry that
 * never reached a handler), else the policy's wait for that count, never below minIdleMs.
 */
export function retryAfterMs(policy: RetryPolicy, minIdleMs: number, id: string, deliveries: number): number {
  if (deliveries < 1) return minIdleMs;
  let delay = policy.baseMs;
  if (policy.backoff === 'exponential') {
    for (let step = 2; step <= Math.min(deliveries, MAX_STEPS); step += 1) {
      if (delay >= policy.maxMs) break;
      delay = delay * policy.factor;
    }
    if (delay > policy.maxMs) delay = policy.maxMs;
  }
  if (policy.jitter > 0 && delay > minIdleMs) delay = delay * (1 - policy.jitter * unitHash(id, deliveries));
  delay = Math.floor(delay);
  return delay < minIdleMs ? minIdleMs : delay;
}

/**
 * When a pending entry is due (Redis ms): its last delivery plus retryAfterMs, and never
 * before a deferral's not-before. `idleMs` and `nowMs` must come from the same Redis reading.
 */
export function dueAtMs(policy: RetryPolicy, minIdleMs: number, row: { id: string; deliveries: number; idleMs: number }, nowMs: number, notBeforeMs?: number): number {
  const at = nowMs - row.idleMs + retryAfterMs(policy, minIdleMs, row.id, row.deliveries);
  return notBeforeMs !== undefined && notBeforeMs > at ? notBeforeMs : at;
}

/** The claim.lua arguments of a policy (ARGV[9..13]); numbers as JS prints them, which Lua parses to the same double. */
export function retryArgs(policy: RetryPolicy): string[] {
  return [policy.backoff, String(policy.baseMs), String(policy.factor), String(policy.maxMs), String(policy.jitter)];
}
