/**
 * The backlog of one configured consumer: the SPEC §8 probe plus the consumer's name, with a
 * missing stream or group reported as a state (`no_group`) rather than an error, because a
 * deployment whose first poll has not run yet is healthy. Shared by the CLI, the status page
 * and the dashboard.
 */
import { closedAlertMsOf, rateSpacing } from '../consume/config';
import type { ConsumerPlan } from './define-config';
import { errorCode, type RedisCommandError } from '../ground/errors';
import type { RedisPort } from '../redis/port';
import { probeBacklog, type Backlog } from '../probes/backlog';

export type ConsumerBacklog =
  | ({ readonly consumer: string; readonly stream: string; readonly group: string; readonly status: 'ok' } & Backlog)
  | { readonly consumer: string; readonly stream: string; readonly group: string; readonly status: 'no_group' };

export async function consumerBacklog(port: RedisPort, plan: ConsumerPlan): Promise<ConsumerBacklog> {
  const { stream, group, keys, minIdleMs, retry, rateLimit } = plan.config;
  const base = { consumer: plan.name, stream, group };
  try {
    const target = {
      stream,
      group,
      dlt: keys.dlt,
      due: { minIdleMs, retry, deferKey: keys.defer },
      flowLease: keys.flowLease,
      flowClosedAlertMs: closedAlertMsOf(plan.config),
      ...(rateLimit === undefined ? {} : { rateLimit: { toleranceMs: rateSpacing(rateLimit).toleranceMs, perKey: rateLimit.key === 'flow' } }),
    };
    return { ...base, status: 'ok', ...(await probeBacklog(port, target)) };
  } catch (error) {
    const reply = errorCode(error) === 'REDIS_COMMAND_FAILED' ? (error as RedisCommandError).reply : '';
    if (/^NOGROUP|no such key/i.test(reply)) return { ...base, status: 'no_group' };
    throw error;
  }
}
