/** Lowercase hex, the signature's wire form (SPEC §3.1). Decoding is strict: a signature is
 *  either canonical lowercase hex or it is not a signature. */

const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 1) out += BYTE_HEX[bytes[i]!]!;
  return out;
}

/** Value of a lowercase hex digit's char code, or -1 (uppercase is not canonical). */
function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/** Bytes of a lowercase, even-length hex string; undefined for anything else. Runs once per
 *  verified entry, so it avoids a regex and per-byte substrings. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i += 1) {
    const high = nibble(text.charCodeAt(2 * i));
    const low = nibble(text.charCodeAt(2 * i + 1));
    if (high < 0 || low < 0) return undefined;
    bytes[i] = (high << 4) | low;
  }
  return bytes;
}
