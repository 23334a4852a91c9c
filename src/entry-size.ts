/**
 * What a run knows of its stream's entry size before its first claim (SPEC §5.1 "Byte
 * budget"). Without it the byte budget assumes large entries (32 KiB) and caps a large
 * batch's first claim (b500 → 128 entries at the default budget), which costs small-entry
 * streams whole extra rounds per run.
 *
 * Two sources, cheapest first: what the previous run of this process observed on the same
 * stream (warm Lambda containers, long-lived processes, repeated cron runs), and, only
 * when the assumption would cap the first claim at all, a one-entry probe — the stream's
 * newest entry (`XREVRANGE + - COUNT 1`), one small round trip. The probe is a sample, not
 * a bound: from the first claim on, counts follow the entries actually read.
 *
 * The previous run also leaves its handling time per entry, so a run can claim its second
 * batch beside its first one instead of waiting a round to learn how long one takes. A
 * wrong estimate costs nothing unsafe: whatever a stopping run claimed ahead and never
 * started is released (SPEC §5.1 (b)).
 */
import { command, type RedisCommand, type RedisReply } from './redis/port';
import { asArray } from './redis/reply';

/** Streams remembered per process; beyond this the oldest is forgotten (names are unbounded input). */
const REMEMBERED_STREAMS = 256;

/** What a finished run observed on its stream. */
export interface Observed {
  readonly entryBytes?: number;
  /** Wall-clock handling time per entry, ms (concurrency included). */
  readonly perEntryMs?: number;
}

const learned = new Map<string, Observed>();

/** What the previous run of this process observed on `stream` (group: handling times differ per consumer). */
export function remembered(stream: string, group: string): Observed {
  return learned.get(`${group}\u0000${stream}`) ?? {};
}

export function remember(stream: string, group: string, observed: Observed): void {
  const key = `${group}\u0000${stream}`;
  learned.delete(key);
  learned.set(key, observed);
  if (learned.size > REMEMBERED_STREAMS) learned.delete(learned.keys().next().value!);
}

export function probeCommand(stream: string): RedisCommand {
  return command('XREVRANGE', stream, '+', '-', 'COUNT', 1);
}

/** Bytes of the probed entry (id, field names and values), or undefined for an empty stream. */
export function probedEntryBytes(reply: RedisReply): number | undefined {
  const [entry] = asArray(reply, 'XREVRANGE reply');
  if (entry === undefined) return undefined;
  const [id, fields] = asArray(entry, 'XREVRANGE entry');
  let bytes = byteLength(id);
  for (const part of asArray(fields ?? [], 'XREVRANGE fields')) bytes += byteLength(part);
  return bytes;
}

function byteLength(reply: RedisReply | undefined): number {
  return reply instanceof Uint8Array ? reply.byteLength : 0;
}
