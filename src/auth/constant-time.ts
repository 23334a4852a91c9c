/**
 * Byte comparison whose running time does not depend on where the inputs differ, for
 * secrets compared against attacker-chosen input (producer tokens, signatures). Lengths are
 * not secret: a length mismatch returns early.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * Whether lowercase hex `hex` (a digest we computed) spells exactly `bytes` (what was
 * presented), in constant time: the digits are decoded without branches, so the timing
 * reveals nothing about either value, and no bytes are allocated for the comparison.
 */
export function constantTimeEqualHex(hex: string, bytes: Uint8Array): boolean {
  if (hex.length !== 2 * bytes.length) return false;
  let difference = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    const high = hex.charCodeAt(2 * i);
    const low = hex.charCodeAt(2 * i + 1);
    // '0'-'9' is 0x30-0x39 and 'a'-'f' is 0x61-0x66: the low nibble, plus 9 for letters.
    const value = (((high & 0xf) + 9 * (high >> 6)) << 4) | ((low & 0xf) + 9 * (low >> 6));
    difference |= value ^ bytes[i]!;
  }
  return difference === 0;
}

/**
 * Whether `presented` (bytes as stored, e.g. a `sig` field) are exactly the ASCII of `text`
 * (a lowercase hex digest we computed), in constant time: for a signature verifier that
 * checks the stored hex without decoding it into bytes first.
 */
export function constantTimeEqualAscii(text: string, presented: Uint8Array): boolean {
  if (text.length !== presented.length) return false;
  let difference = 0;
  for (let i = 0; i < presented.length; i += 1) difference |= text.charCodeAt(i) ^ presented[i]!;
  return difference === 0;
}
