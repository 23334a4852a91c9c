/**
 * Bytes to text, the rules every layer shares. Redis hands back bytes; a payload, a key id or
 * a signature becomes text only through these, so what "UTF-8" means is decided once:
 * lenient for display (U+FFFD for malformed input), strict for payloads and for what the REST
 * transport can carry byte-for-byte (see src/redis/utf8.ts), and exact for what is compared
 * as an identity — field names, event ids, key ids (SPEC §3.4 "Exact bytes"). Only payload
 * decoding drops a leading byte-order mark; nothing else strips or merges a byte.
 */

/** Lenient, but a leading U+FEFF is kept (`ignoreBOM`): the text still starts as the bytes do. */
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Text for display: malformed bytes become U+FFFD rather than an error. Never an identity:
 * two different malformed byte strings can read the same (use exactUtf8Text or
 * surrogateEscapedText to compare).
 */
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

/**
 * Text that stands for any bytes one to one: well-formed UTF-8 sequences as their
 * characters, every other byte (always 0x80..0xFF) as the lone surrogate U+DC80..U+DCFF
 * (Python's "surrogateescape"). Different bytes give different text, and well-formed UTF-8
 * never decodes to a lone surrogate, so a name that is not UTF-8 can never equal one that
 * is — where a lenient decoder reads every malformed byte as the same U+FFFD.
 *
 * @example
 * surrogateEscapedText(Uint8Array.of(0x61, 0xff)) // 'a\udcff'
 */
export function surrogateEscapedText(bytes: Uint8Array): string {
  const exact = exactUtf8Text(bytes);
  if (exact !== undefined) return exact;
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const length = wellFormedSequenceLength(bytes, i);
    if (length === 0) {
      text += String.fromCharCode(0xdc00 + bytes[i]!);
      i += 1;
    } else {
      text += strictUtf8.decode(bytes.subarray(i, i + length));
      i += length;
    }
  }
  return text;
}

/** Bytes of the well-formed UTF-8 sequence starting at `i`, or 0 when none does (Unicode Table 3-7). */
function wellFormedSequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  if (lead < 0x80) return 1;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0; // no overlong forms
    if (lead === 0xed) high = 0x9f; // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90; // no overlong forms
    if (lead === 0xf4) high = 0x8f; // nothing past U+10FFFF
  } else return 0;
  if (i + length > bytes.length) return 0;
  const second = bytes[i + 1]!;
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k += 1) if (bytes[i + k]! < 0x80 || bytes[i + k]! > 0xbf) return 0;
  return length;
}
