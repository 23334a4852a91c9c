/** `backlog [consumer...]`: how far each consumer's group is behind (SPEC §8 backlog probe). */
import type { ConsumerPlan } from '../../src/deployment/define-config';
import { errorCode, type RedisCommandError } from '../../src/errors';
import { probeBacklog, type Backlog } from '../../src/probes/backlog';
import type { RedisPort } from '../../src/redis/port';
import type { CommandContext } from '../context';
import { formatAge } from '../duration';
import { consumerNamed } from '../load-config';

export type ConsumerBacklog =
  | ({ readonly consumer: string; readonly stream: string; readonly group: string; readonly status: 'ok' } & Backlog)
  | { readonly consumer: string; readonly stream: string; readonly group: string; readonly status: 'no_group' };

/** The backlog of one consumer's group; a missing stream or group is a state, not an error. */
export async function consumerBacklog(port: RedisPort, plan: ConsumerPlan): Promise<ConsumerBacklog> {
  const { stream, group, keys } = plan.config;
  const base = { consumer: plan.name, stream, group };
  try {
    return { ...base, status: 'ok', ...(await probeBacklog(port, { stream, group, dlt: keys.dlt })) };
  } catch (error) {
    const reply = errorCode(error) === 'REDIS_COMMAND_FAILED' ? (error as RedisCommandError).reply : '';
    if (/^NOGROUP|no such key/i.test(reply)) return { ...base, status: 'no_group' };
    throw error;
  }
}

function describe(b: ConsumerBacklog): string {
  if (b.status === 'no_group') return `${b.consumer}  ${b.stream} / ${b.group}: no group yet (created by the first poll)`;
  const oldest = b.oldestPendingAgeMs === undefined ? '' : `, oldest ${formatAge(b.oldestPendingAgeMs)} (${b.oldestPendingDeliveries} deliveries)`;
  return `${b.consumer}  ${b.stream} / ${b.group}: pending ${b.pending}${oldest}, lag ${b.lag ?? 'unknown'}, dead letters ${b.deadLetters}, consumers ${b.consumers}, length ${b.streamLength}`;
}

export async function backlogCommand(ctx: CommandContext): Promise<void> {
  const { config } = ctx.loaded;
  const plans = ctx.args.positionals.length === 0 ? [...config.consumers.values()] : ctx.args.positionals.map((name) => consumerNamed(config, name));
  const port = ctx.runtime().port;
  const backlogs = await Promise.all(plans.map((plan) => consumerBacklog(port, plan)));
  ctx.emit(backlogs, () => backlogs.map(describe));
}
