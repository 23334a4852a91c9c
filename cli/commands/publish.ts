/**
 * `publish <event-type> --id <event_id>`: one event appended through the library
 * publisher, signed as the producer that holds the route's key (--as when several can) —
 * or, with --delay / --deliver-at, kept in the stream's schedule until then.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';
import { formatRfc3339, parseDelay, parseRfc3339, type ScheduleOptions } from '../../src/schedule/due-time';
import type { PublishResult } from '../../src/publish/publisher';

/** Every producer identity the config mentions that can sign `eventType`. */
export function signersOf(config: DeploymentConfig, eventType: string): string[] {
  const identities = new Set<string>();
  for (const stream of Object.values(config.data.streams)) {
    const auth = stream.auth;
    if (auth.mode === 'hmac-keyring') for (const key of Object.values(auth.keys)) identities.add(key.producer);
    else identities.add(auth.producer);
  }
  return [...identities].filter((producer) => config.routesFor(producer).some((route) => route.eventType === eventType)).sort();
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function payloadOf(ctx: CommandContext): Promise<Uint8Array | string> {
  const text = ctx.args.string('payload');
  const file = ctx.args.string('payload-file');
  if ((text === undefined) === (file === undefined)) throw new UsageError('publish needs exactly one of --payload <text> or --payload-file <file>');
  if (text !== undefined) return text;
  if (file === '-') return readStdin();
  try {
    return readFileSync(resolve(ctx.io.cwd, file!));
  } catch (error) {
    throw new UsageError(`cannot read --payload-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** --delay or --deliver-at (SPEC §5.6): the event is kept in its stream's schedule until then. */
function scheduleOf(ctx: CommandContext): ScheduleOptions | undefined {
  const delay = ctx.args.string('delay');
  const deliverAt = ctx.args.string('deliver-at');
  if (delay !== undefined && deliverAt !== undefined) throw new UsageError('publish takes --delay or --deliver-at, not both');
  if (delay !== undefined) {
    const delayMs = parseDelay(delay);
    if (delayMs === undefined) throw new UsageError(`--delay must be a duration like 500ms, 30s, 10m, 2h or 7d (got ${JSON.stringify(delay)})`);
    return { delayMs };
  }
  if (deliverAt !== undefined) {
    const at = parseRfc3339(deliverAt);
    if (at === undefined) throw new UsageError(`--deliver-at must be an RFC 3339 time with an offset, e.g. 2026-12-24T18:00:00Z (got ${JSON.stringify(deliverAt)})`);
    return { deliverAt: at };
  }
  return undefined;
}

function describeResult(result: PublishResult, as: string): string {
  const { eventId, stream, scheduled } = result;
  if (scheduled !== undefined) {
    const at = formatRfc3339(scheduled.deliverAtMs);
    if (!result.duplicate) return `${eventId}: scheduled on ${stream} for ${at} (signed as ${as})`;
    return `${eventId}: duplicate — already ${scheduled.cancelled ? 'scheduled and cancelled' : 'scheduled'} on ${stream} for ${at} (dedupe window)`;
  }
  return result.duplicate
    ? `${eventId}: duplicate — already appended as ${result.entryId} on ${stream} (dedupe window)`
    : `${eventId}: appended to ${stream} as ${result.entryId} (signed as ${as})`;
}

export async function publishCommand(ctx: CommandContext): Promise<void> {
  const { args, loaded } = ctx;
  const [eventType, ...rest] = args.positionals;
  if (eventType === undefined || rest.length > 0) throw new UsageError('publish takes one event type');
  if (!(eventType in loaded.config.data.routes)) {
    throw new UsageError(`no route for event type ${JSON.stringify(eventType)}; routed: ${Object.keys(loaded.config.data.routes).join(', ')}`);
  }
  const eventId = args.string('id');
  if (eventId === undefined) throw new UsageError('publish needs --id <event_id>');
  const signers = signersOf(loaded.config, eventType);
  const as = args.string('as') ?? (signers.length === 1 ? signers[0] : undefined);
  if (as === undefined) throw new UsageError(`several producers can sign ${eventType} (${signers.join(', ')}): choose one with --as`);
  if (!signers.includes(as)) throw new UsageError(`producer ${JSON.stringify(as)} cannot sign ${eventType}; can: ${signers.join(', ') || 'nobody'}`);
  const schedule = scheduleOf(ctx);
  const payload = await payloadOf(ctx);

  const result = await ctx.runtime().publisherFor(as).publish({ eventType, eventId, payload, traceparent: args.string('traceparent'), flowKey: args.string('flow-key') }, schedule);
  const json = { event_id: result.eventId, event_type: result.eventType, stream: result.stream, entry_id: result.entryId, duplicate: result.duplicate, producer: as };
  const scheduled = result.scheduled;
  const scheduledJson = scheduled === undefined ? {} : { entry_id: null, deliver_at: formatRfc3339(scheduled.deliverAtMs), ...(scheduled.cancelled ? { cancelled: true } : {}) };
  ctx.emit({ ...json, ...scheduledJson }, () => [describeResult(result, as)]);
}
