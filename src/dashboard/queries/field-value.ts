/**
 * A stored field value made safe to show: capped in size, and shown as text only when its
 * bytes are well-formed UTF-8 (anything else as hex, so an operator sees the bytes that are
 * there instead of U+FFFD). Escaping for HTML happens where the value is rendered; this
 * module decides only what is shown, the same for the HTML and the JSON answers.
 */
import { exactUtf8Text } from '../../ground/text';

/** Bytes of one value shown before "… N more bytes": enough for a typical envelope. */
export const SHOWN_BYTES = 4096;

export interface ShownValue {
  readonly encoding: 'utf8' | 'hex';
  /** The text (utf8) or lowercase hex of the first bytes. */
  readonly shown: string;
  readonly totalBytes: number;
  /** Bytes left out after the cap (0 when the whole value is shown). */
  readonly omittedBytes: number;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hexOf(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX[byte];
  return out;
}

/** The longest prefix of at most `cap` bytes that does not cut a UTF-8 sequence in two. */
function utf8Prefix(bytes: Uint8Array, cap: number): Uint8Array {
  if (bytes.length <= cap) return bytes;
  let end = cap;
  // Continuation bytes are 0b10xxxxxx: back up to the first byte of the cut sequence.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

export function showValue(bytes: Uint8Array, cap: number = SHOWN_BYTES): ShownValue {
  const totalBytes = bytes.length;
  // Decided on the whole value: a prefix of binary bytes may happen to be valid UTF-8.
  if (exactUtf8Text(bytes) !== undefined) {
    const prefix = utf8Prefix(bytes, cap);
    return { encoding: 'utf8', shown: exactUtf8Text(prefix) ?? '', totalBytes, omittedBytes: totalBytes - prefix.length };
  }
  const prefix = bytes.subarray(0, cap);
  return { encoding: 'hex', shown: hexOf(prefix), totalBytes, omittedBytes: totalBytes - prefix.length };
}
