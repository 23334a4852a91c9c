/**
 * Bounded scans of a stream's newest entries, and the two identities the dashboard looks
 * for in them: the `event_id` field, and the saga `instance_id` inside a JSON payload
 * (SPEC §9 envelopes carry it; src/saga/ordering.ts reads it the same way).
 */
import { Fields, parseEntries, type StreamEntry } from '../../entry';
import { command, type RedisCommand, type RedisReply } from '../../redis/port';
import { decodeText } from '../../redis/reply';
import { exactUtf8Text } from '../../redis/utf8';

/** Newest entries each scan reads per stream (and per DLT) unless told otherwise. */
export const DEFAULT_SCAN_LIMIT = 1_000;
export const MAX_SCAN_LIMIT = 10_000;

export function newestEntriesCommand(stream: string, limit: number): RedisCommand {
  return command('XREVRANGE', stream, '+', '-', 'COUNT', limit);
}

export function parseNewestEntries(reply: RedisReply): StreamEntry[] {
  return parseEntries(reply, () => 0, false);
}

export function eventIdOf(fields: ReadonlyMap<string, Uint8Array>): string | undefined {
  const bytes = fields.get(Fields.eventId);
  return bytes === undefined ? undefined : decodeText(bytes);
}

/**
 * The payload's saga instance id, or undefined when the payload is not a JSON object with a
 * string `instance_id`. With `wanted`, payloads whose text cannot contain it are skipped
 * before parsing (a scan of a thousand entries parses only the few that may match).
 */
export function instanceIdOf(fields: ReadonlyMap<string, Uint8Array>, wanted?: string): string | undefined {
  const bytes = fields.get(Fields.payload);
  const text = bytes === undefined ? undefined : exactUtf8Text(bytes);
  if (text === undefined || !text.includes('instance_id')) return undefined;
  if (wanted !== undefined && !text.includes(JSON.stringify(wanted).slice(1, -1))) return undefined;
  try {
    const value = JSON.parse(text) as { instance_id?: unknown } | null;
    return typeof value?.instance_id === 'string' ? value.instance_id : undefined;
  } catch {
    return undefined;
  }
}
