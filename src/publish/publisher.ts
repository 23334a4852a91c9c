/**
 * The library publisher (SPEC §6.1). Success means Redis confirmed the append — and, with
 * `durability`, that the append reached the AOF or the replicas asked for (WAITAOF / WAIT in
 * the same round trip). Any failure to get that confirmation is a transient PublishError —
 * the caller's outbox retries — and counts as a duplicate hint, because the append may have
 * happened. A batch is one round trip; with the dedupe window on, each event goes through
 * publish.lua, so retrying a batch that half-failed appends only what is missing.
 */
import type { HmacEngine } from '../auth/hmac';
import { appendScript, publishScript } from '../generated/lua-scripts';
import { scheduleKeys } from '../entry/schedule-keys';
import { sizeKeys } from '../entry/size-keys';
import { describeThrown, errorCode } from '../ground/errors';
import { hashTagOf } from '../entry/hash-tag';
import { command, type RedisPort, type RedisReply } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import { runOperationsSettled, throwIfError, type Operation } from '../redis/script';
import { checkDurabilitySupport, durabilityCommands, durabilityNeedsServer, durabilityOutcome } from '../redis/durability';
import { MAX_PUBLISH_BATCH, parsePublisherConfig, type PublisherConfig, type PublisherConfigInput } from './config';
import { checkEvent, prepareEntry, routeOf, type PreparedEntry, type PublishEvent } from './entry-fields';
import type { DueTime, ScheduleOptions } from '../schedule/due-time';
import { PublishError } from './errors';
import { addProcessDuplicateHints } from './hints';
import { tracePublish } from '../telemetry/tracing';
import { withTimeLimit } from '../ground/time-limit';
import { dueTimeOf, duplicateOf, keyReused, scheduledOperation, scheduledOutcome, type ScheduledState } from './scheduled';

export interface PublishResult {
  readonly eventId: string;
  readonly eventType: string;
  readonly stream: string;
  /**
   * The appended entry's id; for a duplicate, the id of the original append. Empty ('') when
   * the event was scheduled (or, for a duplicate, its original was) — `scheduled` says when
   * it is due: a scheduled event gets its entry id only when it is moved into the stream.
   */
  readonly entryId: string;
  /** True when the dedupe window already held this event_id and nothing was appended. */
  readonly duplicate: boolean;
  /** Present when the event (for a duplicate, its original) was scheduled (SPEC §5.6). */
  readonly scheduled?: ScheduledState;
}

export interface PublisherOptions extends PublisherConfigInput {
  readonly port: RedisPort;
  /** Signs entries; Web Crypto by default. On Node pass `nodeHmac` (saga-streams/node). */
  readonly hmac?: HmacEngine;
}

export interface Publisher {
  readonly config: PublisherConfig;
  /**
   * Appends the event now, or — with `deliverAt` or `delayMs`, on the event or in `schedule`
   * (SPEC §5.6) — signs it now and keeps it in the stream's schedule until its due time.
   */
  publish(event: PublishEvent, schedule?: ScheduleOptions): Promise<PublishResult>;
  /** All events in one round trip (each may carry its own due time); results in input order. Invalid input sends nothing. */
  publishBatch(events: readonly PublishEvent[]): Promise<PublishResult[]>;
  /** Events of this publisher that went through a failed append. */
  readonly duplicateHints: number;
  /**
   * Checks what the config asks of the server — with `durability` involving WAITAOF, that the
   * server has it (and its AOF is on for `primaryAof`) — and throws a ConfigError naming the
   * option if not. Asks the server once per port; call it at the start of a long-lived process.
   * The first publish checks it too.
   */
  ready(): Promise<void>;
}

/** Field/value pairs the dedupe digest covers: event type, event id, payload (entry-fields.ts puts them first). */
const BODY_PAIRS = 3;

/**
 * One event's append. Both scripts record the entry's size beside it (size-keys.ts): a
 * consumer reads fresh entries without copying them through Lua only when every entry of
 * the stream was appended this way (SPEC §5.1 "Byte budget", claim.lua).
 */
function operationOf(config: PublisherConfig, entry: PreparedEntry, cluster: boolean, due: DueTime | undefined): Operation {
  if (due !== undefined) return scheduledOperation(config, entry, due);
  const { route, event, fields } = entry;
  const sizes = sizeKeys(route.stream);
  if (config.dedupeWindowSeconds === 0) {
    // On Cluster a stream without a hash tag puts its size keys in other slots: a plain XADD
    // then, and its consumers read it through claim.lua (slower, as safe).
    if (cluster && hashTagOf(sizes.counts) !== hashTagOf(route.stream)) return command('XADD', route.stream, '*', ...fields);
    return { script: appendScript, keys: [route.stream, sizes.counts, sizes.large], args: fields };
  }
  const keys = [route.stream, route.dedupePrefix + event.eventId, sizes.counts, sizes.large];
  // The schedule too, where it shares the stream's slot: an event_id still waiting there is a
  // duplicate even after its record expired (publish.lua).
  const schedule = scheduleKeys(route.stream);
  if (!cluster || hashTagOf(schedule.due) === hashTagOf(route.stream)) keys.push(schedule.due, schedule.entries);
  return { script: publishScript, keys, args: [config.dedupeWindowSeconds, BODY_PAIRS, ...fields] };
}

function describeEntries(entries: readonly PreparedEntry[]): string {
  return entries.length === 1 ? `event ${entries[0]!.event.eventId}` : `batch of ${entries.length} events`;
}

function resultOf(config: PublisherConfig, entry: PreparedEntry, reply: RedisReply, due: DueTime | undefined): PublishResult {
  const base = { eventId: entry.event.eventId, eventType: entry.event.eventType, stream: entry.route.stream };
  if (due !== undefined) return { ...base, ...scheduledOutcome(entry, reply, config.maxDelayMs) };
  if (config.dedupeWindowSeconds === 0) return { ...base, entryId: asText(reply, 'XADD reply'), duplicate: false };
  const [entryId, status] = asArray(reply, 'publish reply');
  const code = asInteger(status, 'publish status');
  if (code === 2) throw keyReused(entry.event.eventId);
  const original = asText(entryId, 'publish entry id');
  // The record of a scheduled event holds `scheduled@<due>` where an entry id would be.
  return code === 1 ? { ...base, ...duplicateOf(original) } : { ...base, entryId: original, duplicate: false };
}

/**
 * An event without a traceparent of its own carries the active trace's (the publish span's),
 * written before signing so the signature covers it (SPEC §3.2) and the consumer may trust it.
 */
function carryingTrace(event: PublishEvent, traceparent: string | undefined): PublishEvent {
  return traceparent === undefined || event.traceparent !== undefined ? event : { ...event, traceparent };
}

export function createPublisher(options: PublisherOptions): Publisher {
  const { port, hmac, ...input } = options;
  const config = parsePublisherConfig(input, { cluster: port.cluster, transport: port.transport });
  const waits = config.durability === undefined ? [] : durabilityCommands(config.durability);
  let hints = 0;
  const ready = () => checkDurabilitySupport(port, config.durability, 'durability', 'publisher config');
  const checksServer = config.durability !== undefined && durabilityNeedsServer(config.durability);

  /**
   * Refused before anything is sent: a server that cannot give the durability asked for (a
   * ConfigError naming the option, as is). Not learning it in time is a transient failure
   * that appended nothing, so it counts no duplicate hint.
   */
  const serverReady = async (entries: PreparedEntry[]): Promise<void> => {
    try {
      await withTimeLimit(ready(), config.timeoutMs);
    } catch (error) {
      if (errorCode(error) === 'CONFIG_INVALID') throw error;
      const reason = describeThrown(error).message ?? 'unknown failure';
      throw new PublishError('PUBLISH_APPEND_FAILED', `${describeEntries(entries)} not sent (retry it): what the server offers could not be learned: ${reason}`, { cause: error });
    }
  };

  /** The appends' replies, once Redis confirmed them (and their durability, when asked). */
  const confirmed = async (entries: PreparedEntry[], dues: ReadonlyArray<DueTime | undefined>): Promise<RedisReply[]> => {
    const replies = await runOperationsSettled(port, entries.map((entry, i) => operationOf(config, entry, port.cluster, dues[i])), waits);
    const appended = replies.slice(0, entries.length).map(throwIfError);
    if (config.durability !== undefined) {
      const durability = durabilityOutcome(config.durability, replies.slice(entries.length));
      if (!durability.confirmed) throw new Error(`durability not confirmed: ${durability.detail}`);
    }
    return appended;
  };

  const appendAll = async (entries: PreparedEntry[], dues: ReadonlyArray<DueTime | undefined>): Promise<RedisReply[]> => {
    if (checksServer) await serverReady(entries);
    const sent = confirmed(entries, dues);
    try {
      // A publish never waits longer than its budget for a reply.
      return await withTimeLimit(sent, config.timeoutMs);
    } catch (error) {
      sent.catch(() => {}); // a late rejection after the timeout is already accounted for
      hints += entries.length;
      addProcessDuplicateHints(entries.length);
      const reason = describeThrown(error).message ?? 'unknown failure';
      throw new PublishError('PUBLISH_APPEND_FAILED', `append of ${describeEntries(entries)} not confirmed (retry it): ${reason}`, { cause: error });
    }
  };

  const publishBatch = async (events: readonly PublishEvent[]): Promise<PublishResult[]> => {
    if (events.length > MAX_PUBLISH_BATCH) {
      throw new PublishError('PUBLISH_EVENT_INVALID', `a batch holds at most ${MAX_PUBLISH_BATCH} events`);
    }
    const now = Date.now();
    const routed = events.map((event) => {
      const route = routeOf(config.routes, event);
      checkEvent(event, port.transport);
      return { route, event, due: dueTimeOf(event, route, config, port.cluster, now) };
    });
    if (routed.length === 0) return [];
    // A Cluster round trip reaches one node: ioredis refuses a pipeline spanning slots, and
    // reporting that as a transient failure would make the outbox retry it forever.
    if (port.cluster && new Set(routed.map(({ route }) => hashTagOf(route.stream))).size > 1) {
      throw new PublishError('PUBLISH_EVENT_INVALID', 'on Redis Cluster a batch must target streams sharing one hash tag: split it per tag');
    }
    const streams = routed.map(({ route }) => route.stream);
    return tracePublish(streams, routed.length, async (traceparent) => {
      const entries = await Promise.all(routed.map(({ route, event }) => prepareEntry(route, carryingTrace(event, traceparent), hmac)));
      const dues = routed.map(({ due }) => due);
      const replies = await appendAll(entries, dues);
      return entries.map((entry, i) => resultOf(config, entry, replies[i] ?? null, dues[i]));
    });
  };

  return {
    config,
    publishBatch,
    publish: async (event, schedule) => (await publishBatch([schedule === undefined ? event : { ...event, ...schedule }]))[0]!,
    get duplicateHints() {
      return hints;
    },
    ready,
  };
}
