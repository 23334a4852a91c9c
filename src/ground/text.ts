/**
 * Bytes to text, the rules every layer shares. Redis hands back bytes; a payload, a key id or
 * a signature becomes text only through these, so what "UTF-8" means is decided once: lenient
 * for diagnostics and ids (U+FFFD for malformed input), strict for payloads and for what the
 * REST transport can carry byte-for-byte (see src/redis/utf8.ts).
 */

const lenientUtf8 = new TextDecoder('utf-8');

/** Text for display or lookup: malformed bytes become U+FFFD rather than an error. */
export function decodeText(bytes: Uint8Array): string {
  return lenientUtf8.decode(bytes);
}

/** `fatal` rejects malformed input; `ignoreBOM` keeps a leading U+FEFF instead of eating it. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Like `strictUtf8`, but a leading BOM is dropped, as text decoding always did for payloads. */
const strictPayloadUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The payload's text; throws a TypeError when the bytes are not well-formed UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  return strictPayloadUtf8.decode(bytes);
}

/** The text whose UTF-8 encoding is exactly `bytes`, or undefined when there is none. */
export function exactUtf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function isWellFormedUtf8(bytes: Uint8Array): boolean {
  return exactUtf8Text(bytes) !== undefined;
}
