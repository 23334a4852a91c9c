/**
 * What a run knows of its stream's entry size before its first claim (SPEC §5.1 "Byte
 * budget"). Without it the byte budget assumes large entries (32 KiB) and caps a large
 * batch's first claim (b500 → 128 entries at the default budget), which costs small-entry
 * streams whole extra rounds per run.
 *
 * Two sources, cheapest first: what the previous run of this process observed on the same
 * stream (run-memory.ts), and, only when the assumption would cap the first claim at all,
 * a one-entry probe — the stream's newest entry (`XREVRANGE + - COUNT 1`), one small round
 * trip. The probe is a sample, not a bound: from the first claim on, counts follow the
 * entries actually read.
 */
import { command, type RedisCommand, type RedisReply } from './redis/port';
import { asArray } from './redis/reply';

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
