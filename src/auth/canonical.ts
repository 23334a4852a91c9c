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
const FIELD_COUNT = 6;
const PREFIX_BYTES = 4;

export function bytesOf(source: ByteSource): Uint8Array {
  return typeof source === 'string' ? utf8.encode(source) : source;
}

function valuesOf(fields: SignedFields): Uint8Array[] {
  const traceparent = fields.traceparent === undefined ? undefined : bytesOf(fields.traceparent);
  return [
    bytesOf(fields.stream),
    bytesOf(fields.eventId),
    bytesOf(fields.eventType),
    bytesOf(fields.payload),
    traceparent === undefined ? ABSENT : PRESENT,
    traceparent ?? NOTHING,
  ];
}

function encodedLength(values: readonly Uint8Array[]): number {
  let length = FIELD_COUNT * PREFIX_BYTES;
  for (const value of values) length += value.length;
  return length;
}

/** Writes one length-prefixed field at `at`; returns the offset after it. */
function writeField(out: Uint8Array, at: number, value: Uint8Array): number {
  const n = value.length;
  out[at] = n >>> 24;
  out[at + 1] = (n >>> 16) & 0xff;
  out[at + 2] = (n >>> 8) & 0xff;
  out[at + 3] = n & 0xff;
  out.set(value, at + PREFIX_BYTES);
  return at + PREFIX_BYTES + n;
}

/** Writes C into `out` from offset 0; `out` must hold encodedLength(values) bytes. */
function writeCanonical(out: Uint8Array, values: readonly Uint8Array[]): void {
  let at = 0;
  for (const value of values) at = writeField(out, at, value);
}

function freshMessage(values: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  writeCanonical(out, values);
  return out;
}

export function canonicalMessage(fields: SignedFields): Uint8Array {
  const values = valuesOf(fields);
  return freshMessage(values, encodedLength(values));
}

/** Messages up to this size reuse the encoder's buffer; a larger one gets its own. */
const REUSED_BUFFER_LIMIT = 1024 * 1024;

/**
 * Encodes C into one buffer it keeps and reuses, for a verifier that checks entry after
 * entry: no allocation per entry, and an HMAC engine hashes one contiguous message. The
 * returned view is valid only until the next `encode`, so it goes only to synchronous
 * HMAC engines (see HmacEngine.synchronous).
 */
export class CanonicalEncoder {
  #buffer = new Uint8Array(1024);
  /** The last view handed out: entries of one size (the common case) reuse it. */
  #view = this.#buffer.subarray(0, 0);

  encode(fields: SignedFields): Uint8Array {
    // Field by field rather than through valuesOf: no array per entry on the verifier's path.
    const stream = bytesOf(fields.stream);
    const eventId = bytesOf(fields.eventId);
    const eventType = bytesOf(fields.eventType);
    const payload = bytesOf(fields.payload);
    const traceparent = fields.traceparent === undefined ? undefined : bytesOf(fields.traceparent);
    const length =
      FIELD_COUNT * PREFIX_BYTES + stream.length + eventId.length + eventType.length + payload.length + 1 + (traceparent?.length ?? 0);
    if (length > REUSED_BUFFER_LIMIT) return freshMessage(valuesOf(fields), length);
    if (length > this.#buffer.length) {
      this.#buffer = new Uint8Array(Math.min(REUSED_BUFFER_LIMIT, Math.max(length, 2 * this.#buffer.length)));
      this.#view = this.#buffer.subarray(0, 0);
    }
    const out = this.#buffer;
    let at = writeField(out, 0, stream);
    at = writeField(out, at, eventId);
    at = writeField(out, at, eventType);
    at = writeField(out, at, payload);
    at = writeField(out, at, traceparent === undefined ? ABSENT : PRESENT);
    writeField(out, at, traceparent ?? NOTHING);
    if (this.#view.length !== length) this.#view = out.subarray(0, length);
    return this.#view;
  }
}
