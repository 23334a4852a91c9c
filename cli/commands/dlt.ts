/**
 * `dlt list` and `dlt redrive`: dead-letter records of every consumed stream (or one,
 * with --stream). Record ids are DLT entry ids, unique per DLT; redrive finds the DLT
 * holding each id, and asks for --stream only if two hold the same one.
 */
import type { ConsumerConfig } from '../../src/consume/config';
import { fieldText } from '../../src/entry/entry';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { command, type RedisPort } from '../../src/redis/port';
import { asArray } from '../../src/redis/reply';
import { runOperations } from '../../src/redis/script';
import { listDeadLetters, MAX_SCAN_LIMIT, type DeadLetterQuery } from '../../src/redrive/list';
import { deadLetterSummaryJson, originalEntry, type DeadLetterRecord } from '../../src/redrive/record';
import { createRedriver, type RedriveOutcome } from '../../src/redrive/redrive';
import type { CommandContext } from '../context';
import { formatAge, parseCount, parseDuration } from '../duration';
import { CommandFailed, UsageError } from '../exit-codes';

const DEFAULT_LIST_LIMIT = 100;
const SCAN_PAGE = 1_000;

/** One consumer config per consumed stream: its keys name the DLT and markers. */
function streamConfigs(config: DeploymentConfig, only: string | undefined): ConsumerConfig[] {
  const byStream = new Map<string, ConsumerConfig>();
  for (const plan of config.consumers.values()) if (!byStream.has(plan.config.stream)) byStream.set(plan.config.stream, plan.config);
  if (only === undefined) return [...byStream.values()];
  const chosen = byStream.get(only);
  if (!chosen) throw new UsageError(`--stream ${JSON.stringify(only)} is not read by any consumer; streams: ${[...byStream.keys()].join(', ')}`);
  return [chosen];
}

function queryOf(ctx: CommandContext): DeadLetterQuery {
  const older = ctx.args.string('older-than');
  const newer = ctx.args.string('newer-than');
  const reasons = ctx.args.strings('reason');
  return {
    reasons: reasons.length > 0 ? reasons : undefined,
    olderThanMs: older === undefined ? undefined : parseDuration(older, 'older-than'),
    newerThanMs: newer === undefined ? undefined : parseDuration(newer, 'newer-than'),
  };
}

/** Matching records of one DLT, oldest first, at most `limit`; pages through the DLT as needed. */
async function collect(ctx: CommandContext, port: RedisPort, config: ConsumerConfig, query: DeadLetterQuery, limit: number): Promise<DeadLetterRecord[]> {
  const records: DeadLetterRecord[] = [];
  let after: string | undefined;
  let scanned = 0;
  do {
    const page = await listDeadLetters(port, config.keys.dlt, { ...query, after, scanLimit: SCAN_PAGE });
    records.push(...page.records);
    scanned += SCAN_PAGE;
    after = page.next;
    if (after !== undefined) ctx.io.progress(`${config.stream}: scanned ${scanned} dead letters, ${records.length} match…`);
  } while (after !== undefined && records.length < limit);
  return records.slice(0, limit);
}

function recordJson(record: DeadLetterRecord, dlt: string, now: number) {
  return {
    ...deadLetterSummaryJson(record, dlt),
    event: fieldText(originalEntry(record), 'event') ?? null,
    age_ms: Math.max(0, now - record.deadLetteredAt),
  };
}

export async function dltListCommand(ctx: CommandContext): Promise<void> {
  if (ctx.args.positionals.length > 0) throw new UsageError('dlt list takes no arguments (filter with --stream, --reason, --older-than)');
  const limitText = ctx.args.string('limit');
  const limit = limitText === undefined ? DEFAULT_LIST_LIMIT : parseCount(limitText, 'limit', MAX_SCAN_LIMIT);
  const configs = streamConfigs(ctx.loaded.config, ctx.args.string('stream'));
  const query = queryOf(ctx);
  const port = ctx.runtime().port;
  const now = Date.now();
  const rows: Array<ReturnType<typeof recordJson>> = [];
  for (const config of configs) {
    for (const record of await collect(ctx, port, config, query, limit)) rows.push(recordJson(record, config.keys.dlt, now));
  }
  ctx.emit(rows, () =>
    rows.length === 0
      ? ['no dead letters match']
      : rows.map((r) => `${r.id}  ${r.stream}  ${r.reason}  event ${r.event ?? '?'} ${r.event_id}  group ${r.group}  ${r.deliveries} deliveries  ${formatAge(r.age_ms)} ago`),
  );
}

/** For each id, the streams whose DLT holds it (one round trip per DLT: Cluster pipelines stay in one slot). */
async function locate(port: RedisPort, configs: readonly ConsumerConfig[], ids: readonly string[]): Promise<Map<string, ConsumerConfig[]>> {
  const found = new Map<string, ConsumerConfig[]>(ids.map((id) => [id, []]));
  const perDlt = await Promise.all(
    configs.map((config) => runOperations(port, ids.map((id) => command('XRANGE', config.keys.dlt, id, id, 'COUNT', 1)))),
  );
  configs.forEach((config, c) => {
    ids.forEach((id, i) => {
      if (asArray(perDlt[c]![i], 'XRANGE reply').length > 0) found.get(id)!.push(config);
    });
  });
  return found;
}

async function redriveIds(ctx: CommandContext, port: RedisPort, configs: readonly ConsumerConfig[], ids: readonly string[]) {
  const bad = ids.filter((id) => !/^\d+-\d+$/.test(id));
  if (bad.length > 0) throw new UsageError(`not dead-letter record ids (ms-seq): ${bad.join(', ')}`);
  const located = configs.length === 1 ? new Map(ids.map((id) => [id, [...configs]])) : await locate(port, configs, ids);
  const ambiguous = [...located].filter(([, holders]) => holders.length > 1).map(([id]) => id);
  if (ambiguous.length > 0) throw new UsageError(`ids held by more than one DLT (add --stream): ${ambiguous.join(', ')}`);
  const outcomes: Array<RedriveOutcome & { stream?: string }> = [];
  for (const config of configs) {
    const mine = ids.filter((id) => located.get(id)?.[0] === config);
    if (mine.length > 0) for (const o of await createRedriver({ port, config }).redrive(mine)) outcomes.push({ ...o, stream: config.stream });
  }
  for (const id of ids) if (located.get(id)?.length === 0) outcomes.push({ id, status: 'missing' });
  return outcomes;
}

async function redriveAll(ctx: CommandContext, port: RedisPort, configs: readonly ConsumerConfig[]) {
  const query = queryOf(ctx);
  const outcomes: Array<RedriveOutcome & { stream?: string }> = [];
  for (const config of configs) {
    const redriver = createRedriver({ port, config });
    let after: string | undefined;
    do {
      const page = await listDeadLetters(port, config.keys.dlt, { ...query, after, scanLimit: SCAN_PAGE });
      // Redriven records leave the DLT, so the next page resumes after the last one scanned.
      for (const o of await redriver.redrive(page.records.map((r) => r.id))) outcomes.push({ ...o, stream: config.stream });
      after = page.next;
      ctx.io.progress(`${config.stream}: redriven ${outcomes.filter((o) => o.status === 'redriven').length} record(s)…`);
    } while (after !== undefined && !ctx.io.signal.aborted);
  }
  return outcomes;
}

export async function dltRedriveCommand(ctx: CommandContext): Promise<void> {
  const { args } = ctx;
  const all = args.flag('all');
  if (all && args.positionals.length > 0) throw new UsageError('dlt redrive takes ids or --all, not both');
  if (!all && args.positionals.length === 0) throw new UsageError('dlt redrive needs record ids (see dlt list) or --all');
  if (!all && (args.strings('reason').length > 0 || args.string('older-than') || args.string('newer-than'))) {
    throw new UsageError('--reason, --older-than and --newer-than filter --all');
  }
  const configs = streamConfigs(ctx.loaded.config, args.string('stream'));
  const port = ctx.runtime().port;
  const outcomes = all ? await redriveAll(ctx, port, configs) : await redriveIds(ctx, port, configs, args.positionals);
  const failed = outcomes.filter((o) => o.status !== 'redriven');
  ctx.emit(outcomes, () => [
    ...outcomes.map((o) => (o.status === 'redriven' ? `${o.id}: redriven to ${o.stream} as ${o.entryId}` : `${o.id}: ${o.status}${o.reason === undefined ? '' : ` (${o.reason})`}`)),
    `${outcomes.length - failed.length} redriven, ${failed.length} not`,
  ]);
  if (failed.length > 0) throw new CommandFailed(`${failed.length} record(s) not redriven`);
}
