/** `backlog [consumer...]`: how far each consumer's group is behind (SPEC §8 backlog probe). */
import { consumerBacklog, type ConsumerBacklog } from '../../src/deployment/consumer-backlog';
import type { CommandContext } from '../context';
import { formatAge } from '../duration';
import { consumerNamed } from '../load-config';

function describe(b: ConsumerBacklog): string {
  if (b.status === 'no_group') return `${b.consumer}  ${b.stream} / ${b.group}: no group yet (created by the first poll)`;
  const oldest = b.oldestPendingAgeMs === undefined ? '' : `, oldest ${formatAge(b.oldestPendingAgeMs)} (${b.oldestPendingDeliveries} deliveries)`;
  const scheduled = b.scheduled === 0 ? '' : `, scheduled ${b.scheduled} (next ${b.scheduledNextDueAt! <= b.observedAtMs ? `due ${formatAge(b.observedAtMs - b.scheduledNextDueAt!)} ago` : `in ${formatAge(b.scheduledNextDueAt! - b.observedAtMs)}`})`;
  return `${b.consumer}  ${b.stream} / ${b.group}: pending ${b.pending}${oldest}, lag ${b.lag ?? 'unknown'}, dead letters ${b.deadLetters}, consumers ${b.consumers}, length ${b.streamLength}${scheduled}`;
}

export async function backlogCommand(ctx: CommandContext): Promise<void> {
  const { config } = ctx.loaded;
  const plans = ctx.args.positionals.length === 0 ? [...config.consumers.values()] : ctx.args.positionals.map((name) => consumerNamed(config, name));
  const port = ctx.runtime().port;
  const backlogs = await Promise.all(plans.map((plan) => consumerBacklog(port, plan)));
  ctx.emit(backlogs, () => backlogs.map(describe));
}
