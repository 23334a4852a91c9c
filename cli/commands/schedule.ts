/**
 * `schedule list`, `schedule cancel` and `schedule move`: the scheduled events of the
 * deployment's streams (SPEC §5.6) — listed earliest due first, cancelled by event_id (one
 * script: a cancel and the move never both win), and moved now when due (the move poll runs
 * and the trim run make; for operators, and for a deployment whose runs do not move yet).
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { command, type RedisPort } from '../../src/redis/port';
import { asArray, asInteger, isBytes } from '../../src/redis/reply';
import { runOperations } from '../../src/redis/script';
import { cancelScheduled, type CancelOutcome } from '../../src/schedule/cancel';
import { scheduleKeys } from '../../src/entry/schedule-keys';
import { listScheduled, MAX_LIST_LIMIT, type ScheduledEvent } from '../../src/schedule/list';
import { DEFAULT_MAX_MOVED, MAX_MAX_MOVED, moveDueEvents } from '../../src/schedule/move';
import { formatRfc3339 } from '../../src/schedule/due-time';
import type { CommandContext } from '../context';
import { formatAge, parseCount } from '../duration';
import { CommandFailed, UsageError } from '../exit-codes';

const DEFAULT_LIST_LIMIT = 100;

/** The deployment's streams, or the one --stream names. */
function streamsOf(config: DeploymentConfig, only: string | undefined): string[] {
  const all = Object.keys(config.data.streams);
  if (only === undefined) return all;
  if (!all.includes(only)) throw new UsageError(`--stream ${JSON.stringify(only)} is not a stream of ${config.name}; streams: ${all.join(', ')}`);
  return [only];
}

async function redisNow(port: RedisPort): Promise<number> {
  const [time] = await runOperations(port, [command('TIME')]);
  const [seconds, micros] = asArray(time, 'TIME reply');
  return asInteger(seconds, 'TIME seconds') * 1000 + Math.floor(asInteger(micros, 'TIME micros') / 1000);
}

function dueText(dueMs: number, now: number): string {
  return dueMs <= now ? `due ${formatAge(now - dueMs)} ago` : `due in ${formatAge(dueMs - now)}`;
}

function eventJson(stream: string, event: ScheduledEvent, now: number) {
  return { stream, event_id: event.eventId, event_type: event.eventType, deliver_at: formatRfc3339(event.dueMs), due_in_ms: event.dueMs - now, bytes: event.bytes };
}

export async function scheduleListCommand(ctx: CommandContext): Promise<void> {
  const { args } = ctx;
  if (args.positionals.length > 0) throw new UsageError('schedule list takes no arguments (filter with --stream)');
  const limitText = args.string('limit');
  const limit = limitText === undefined ? DEFAULT_LIST_LIMIT : parseCount(limitText, 'limit', MAX_LIST_LIMIT);
  const offsetText = args.string('offset');
  const offset = offsetText === undefined ? 0 : offsetText === '0' ? 0 : parseCount(offsetText, 'offset', Number.MAX_SAFE_INTEGER);
  const streams = streamsOf(ctx.loaded.config, args.string('stream'));
  const port = ctx.runtime().port;
  const now = await redisNow(port);
  const rows: Array<ReturnType<typeof eventJson>> = [];
  const totals: string[] = [];
  for (const stream of streams) {
    const page = await listScheduled(port, stream, { offset, limit });
    for (const event of page.events) rows.push(eventJson(stream, event, now));
    if (page.total > 0) totals.push(`${stream}: ${page.total} scheduled${page.nextOffset === undefined ? '' : ` (more: --offset ${page.nextOffset})`}`);
  }
  ctx.emit(rows, () =>
    rows.length === 0
      ? ['no scheduled events']
      : [
          ...rows.map((r) => `${r.event_id}  ${r.stream}  ${r.event_type || '?'}  ${r.deliver_at} (${dueText(now + r.due_in_ms, now)})  ${r.bytes} bytes`),
          ...totals,
        ],
  );
}

/** For each event id, the streams whose schedule holds it (one round trip per stream: Cluster pipelines stay in one slot). */
async function locate(port: RedisPort, streams: readonly string[], ids: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const stream of streams) {
    const scores = await runOperations(port, ids.map((id) => command('ZSCORE', scheduleKeys(stream).due, id)));
    ids.forEach((id, i) => {
      if (isBytes(scores[i])) found.get(id)!.push(stream);
    });
  }
  return found;
}

export async function scheduleCancelCommand(ctx: CommandContext): Promise<void> {
  const { args, loaded } = ctx;
  const ids = args.positionals;
  if (ids.length === 0) throw new UsageError('schedule cancel needs event ids (see schedule list)');
  const streams = streamsOf(loaded.config, args.string('stream'));
  const port = ctx.runtime().port;
  const located = streams.length === 1 ? new Map(ids.map((id) => [id, [...streams]])) : await locate(port, streams, ids);
  const ambiguous = [...located].filter(([, holders]) => holders.length > 1).map(([id]) => id);
  if (ambiguous.length > 0) throw new UsageError(`event ids scheduled on more than one stream (add --stream): ${ambiguous.join(', ')}`);
  const outcomes: Array<CancelOutcome & { stream: string | null }> = [];
  for (const id of ids) {
    const stream = located.get(id)?.[0];
    if (stream === undefined) {
      outcomes.push({ status: 'not_scheduled', eventId: id, stream: null });
      continue;
    }
    const dedupePrefix = loaded.config.data.streams[stream]?.keys?.publishDedupePrefix;
    outcomes.push({ ...(await cancelScheduled(port, stream, id, { dedupePrefix })), stream });
  }
  const missed = outcomes.filter((o) => o.status !== 'cancelled');
  const json = outcomes.map((o) => ({ event_id: o.eventId, stream: o.stream, status: o.status, ...(o.status === 'cancelled' ? { deliver_at: formatRfc3339(o.dueMs) } : {}) }));
  ctx.emit(json, () => [
    ...outcomes.map((o) =>
      o.status === 'cancelled'
        ? `${o.eventId}: cancelled on ${o.stream} (was due ${formatRfc3339(o.dueMs)})`
        : `${o.eventId}: not scheduled (already moved into its stream, already cancelled, or never scheduled)`,
    ),
    `${outcomes.length - missed.length} cancelled, ${missed.length} not`,
  ]);
  if (missed.length > 0) throw new CommandFailed(`${missed.length} event(s) not cancelled`);
}

export async function scheduleMoveCommand(ctx: CommandContext): Promise<void> {
  const { args } = ctx;
  if (args.positionals.length > 0) throw new UsageError('schedule move takes no arguments (choose a stream with --stream)');
  const maxText = args.string('max');
  const maxMoved = maxText === undefined ? DEFAULT_MAX_MOVED : parseCount(maxText, 'max', MAX_MAX_MOVED);
  const streams = streamsOf(ctx.loaded.config, args.string('stream'));
  const port = ctx.runtime().port;
  const results: Array<{ stream: string; moved: number; dropped: number; next_deliver_at: string | null }> = [];
  for (const stream of streams) {
    const result = await moveDueEvents(port, stream, { maxMoved });
    results.push({ stream, moved: result.moved, dropped: result.dropped, next_deliver_at: result.nextDueMs === undefined ? null : formatRfc3339(result.nextDueMs) });
  }
  ctx.emit(results, () =>
    results.map(
      (r) =>
        `${r.stream}: moved ${r.moved}${r.dropped > 0 ? `, dropped ${r.dropped} unreadable` : ''}, ` +
        (r.next_deliver_at === null ? 'nothing else scheduled' : `next due ${r.next_deliver_at}`),
    ),
  );
}
