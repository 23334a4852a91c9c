/** Lowercase hex, the signature's wire form (SPEC §3.1). Decoding is strict: a signature is
 *  either canonical lowercase hex or it is not a signature. */

const HEX_PATTERN = /^(?:[0-9a-f]{2})*$/;

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** Bytes of a lowercase, even-length hex string; undefined for anything else. */
export function fromHex(text: string): Uint8Array | undefined {
  if (!HEX_PATTERN.test(text)) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
