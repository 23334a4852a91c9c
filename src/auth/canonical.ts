/**
 * The canonical signed message C (SPEC §3.2): for each of stream name, event_id, event,
 * payload, traceparent-presence flag and traceparent, a 4-byte big-endian length followed
 * by the bytes. Length prefixes make field boundaries unambiguous ("ab"+"c" ≠ "a"+"bc");
 * the presence flag keeps "no traceparent" and "empty traceparent" apart.
 */

export type ByteSource = string | Uint8Array;

export interface SignedFields {
  /** The stream the entry is appended to; binding it stops cross-stream replay. */
  readonly stream: ByteSource;
  readonly eventId: ByteSource;
  readonly eventType: ByteSource;
  readonly payload: ByteSource;
  /** Absent (undefined) and empty ('') sign differently. */
  readonly traceparent?: ByteSource | undefined;
}

const utf8 = new TextEncoder();
const PRESENT = utf8.encode('1');
const ABSENT = utf8.encode('0');
const NOTHING = new Uint8Array(0);

export function bytesOf(source: ByteSource): Uint8Array {
  return typeof source === 'string' ? utf8.encode(source) : source;
}

export function canonicalMessage(fields: SignedFields): Uint8Array {
  const traceparent = fields.traceparent === undefined ? undefined : bytesOf(fields.traceparent);
  const parts = [
    bytesOf(fields.stream),
    bytesOf(fields.eventId),
    bytesOf(fields.eventType),
    bytesOf(fields.payload),
    traceparent === undefined ? ABSENT : PRESENT,
    traceparent ?? NOTHING,
  ];
  const total = parts.reduce((sum, part) => sum + 4 + part.length, 0);
  const message = new Uint8Array(total);
  const view = new DataView(message.buffer);
  let offset = 0;
  for (const part of parts) {
    view.setUint32(offset, part.length, false);
    message.set(part, offset + 4);
    offset += 4 + part.length;
  }
  return message;
}
