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

/**
 * C as a list of byte ranges (length prefix, field, length prefix, field, ...), so an HMAC
 * engine that hashes incrementally never copies a large payload into one buffer.
 */
export function canonicalParts(fields: SignedFields): Uint8Array[] {
  const traceparent = fields.traceparent === undefined ? undefined : bytesOf(fields.traceparent);
  const values = [
    bytesOf(fields.stream),
    bytesOf(fields.eventId),
    bytesOf(fields.eventType),
    bytesOf(fields.payload),
    traceparent === undefined ? ABSENT : PRESENT,
    traceparent ?? NOTHING,
  ];
  const prefixes = new Uint8Array(4 * values.length);
  const view = new DataView(prefixes.buffer);
  const parts: Uint8Array[] = [];
  values.forEach((value, i) => {
    view.setUint32(4 * i, value.length, false);
    parts.push(prefixes.subarray(4 * i, 4 * i + 4), value);
  });
  return parts;
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function canonicalMessage(fields: SignedFields): Uint8Array {
  return concatBytes(canonicalParts(fields));
}
