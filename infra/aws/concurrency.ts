/**
 * Reserved concurrency per function. It is the one lever Lambda offers both ways: it caps
 * a function (a burst of publishes or wake-ups cannot open a burst of Redis connections;
 * Function URLs have no throttling of their own — excess requests get 429 once the publish
 * function's reservation is used up) and it guarantees capacity (a flood of requests to the
 * public URL, 401s included, cannot take the concurrency the pollers need).
 *
 * Defaults: one run per scheduled job at a time for the poll function (its consumers plus
 * the relay), WAKE_UP_DEFAULT for the wake-up function (also the SQS trigger's maximum
 * concurrency), 2 for trim (a trim run and a backlog probe may overlap), PUBLISH_DEFAULT for
 * the publish API; with isolated consumers, CONSUMER_DEFAULT per consumer's function and 1
 * for the relay's. Reserved concurrency comes out of the account's pool, which must keep 100
 * unreserved: on an account with a low limit, lower these or pass `reservedConcurrency: false`.
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { consumersOf, type FunctionRole } from '../../functions/aws/lib/roles';

export type ReservedConcurrency = Partial<Record<FunctionRole, number>>;

export const WAKE_UP_DEFAULT = 5;
export const PUBLISH_DEFAULT = 20;
export const TRIM_DEFAULT = 2;
/** Its wake-up trigger's floor of 2 concurrent batches, plus its scheduled run. */
export const CONSUMER_DEFAULT = 3;
/** Lambda's floor for an SQS event source's maximum concurrency. */
export const SQS_MIN_MAX_CONCURRENCY = 2;

export function defaultReservedConcurrency(config: DeploymentConfig): Required<ReservedConcurrency> {
  return {
    poll: Math.max(1, consumersOf(config, 'poll').length + (config.data.postgres?.relay ? 1 : 0)),
    'wake-up': WAKE_UP_DEFAULT,
    trim: TRIM_DEFAULT,
    publish: PUBLISH_DEFAULT,
    // Each consumer's own function (isolated layout): its scheduled run and wake-up runs.
    consumer: CONSUMER_DEFAULT,
    relay: 1,
  };
}

/** Each role's reservation, or undefined for none (`false`: the account's unreserved pool for all). */
export function reservedConcurrency(config: DeploymentConfig, overrides: ReservedConcurrency | false | undefined): ReservedConcurrency {
  if (overrides === false) return {};
  return { ...defaultReservedConcurrency(config), ...overrides };
}

/** The SQS trigger never runs more pollers than the function may (else SQS invocations are throttled). */
export function wakeUpMaxConcurrency(reserved: number | undefined): number {
  return Math.max(SQS_MIN_MAX_CONCURRENCY, reserved ?? WAKE_UP_DEFAULT);
}
