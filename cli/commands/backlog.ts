/** `backlog [consumer...]`: how far each consumer's group is behind (SPEC §8 backlog probe). */
import { consumerBacklog, type ConsumerBacklog } from '../../src/deployment/consumer-backlog';
import type { FlowBacklog } from '../../src/probes/backlog';
import type { CommandContext } from '../context';
import { formatAge } from '../duration';
import { consumerNamed } from '../load-config';

function describe(b: ConsumerBacklog): string {
  if (b.status === 'no_group') return `${b.consumer}  ${b.stream} / ${b.group}: no group yet (created by the first poll)`;
  const oldest = b.oldestPendingAgeMs === undefined ? '' : `, oldest ${formatAge(b.oldestPendingAgeMs)} (${b.oldestPendingDeliveries} deliveries)`;
  const scheduled = b.scheduled === 0 ? '' : `, scheduled ${b.scheduled} (next ${b.scheduledNextDueAt! <= b.observedAtMs ? `due ${formatAge(b.observedAtMs - b.scheduledNextDueAt!)} ago` : `in ${formatAge(b.scheduledNextDueAt! - b.observedAtMs)}`})`;
  return `${b.consumer}  ${b.stream} / ${b.group}: pending ${b.pending}${oldest}, lag ${b.lag ?? 'unknown'}, dead letters ${b.deadLetters}, consumers ${b.consumers}, length ${b.streamLength}${scheduled}${flowText(b.flow)}`;
}

/** Flow control's part, when any key is leased or waited on (SPEC §5.7): closed keys with their head and its age. */
function flowText(flow: FlowBacklog | undefined): string {
  if (flow === undefined || (flow.keys === 0 && flow.waiting === 0)) return '';
  const closed = flow.closedKeys.map((k) => `${JSON.stringify(k.key)} (head ${k.headId}, ${formatAge(k.headAgeMs)}, ${k.waiting} waiting)`);
  const busiest = flow.busiestKeys.map((k) => `${JSON.stringify(k.key)} ${k.waiting}`);
  const stuck = flow.closedOverAge === 0 ? '' : `\n  warning: ${flow.closedOverAge} flow keys closed behind their head longer than flow.closedAlertMs (stuck saga instances?)`;
  return `\n  flow: ${flow.keys} keys leased or waited on, ${flow.waiting} entries waiting, ${flow.readyKeys} ready${closed.length > 0 ? `; closed: ${closed.join(', ')}` : ''}${busiest.length > 0 ? `; busiest: ${busiest.join(', ')}` : ''}${stuck}`;
}

export async function backlogCommand(ctx: CommandContext): Promise<void> {
  const { config } = ctx.loaded;
  const plans = ctx.args.positionals.length === 0 ? [...config.consumers.values()] : ctx.args.positionals.map((name) => consumerNamed(config, name));
  const port = ctx.runtime().port;
  const backlogs = await Promise.all(plans.map((plan) => consumerBacklog(port, plan)));
  ctx.emit(backlogs, () => backlogs.map(describe));
}
