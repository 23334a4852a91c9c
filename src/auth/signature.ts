/**
 * Signing and verifying entries (SPEC §3.2): `sig = hex(HMAC-SHA256(key, C))`, computed
 * with Web Crypto only so one implementation serves Node, Lambda and workerd.
 */
import { canonicalMessage, type SignedFields } from './canonical';
import { fromHex, toHex } from './hex';
import type { SecretKey } from './secret';

/** HMAC-SHA256 output length; a decoded signature of any other length cannot match. */
export const SIGNATURE_BYTES = 32;

export async function signEntry(key: SecretKey, fields: SignedFields): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await key.hmacKey(), canonicalMessage(fields));
  return toHex(new Uint8Array(mac));
}

/**
 * True when `sigHex` is the lowercase hex HMAC of the fields. The hex is decoded first and
 * the bytes are compared by `crypto.subtle.verify`, which compares in constant time — never
 * a short-circuiting string comparison that would leak the length of a matching prefix.
 */
export async function verifyEntry(key: SecretKey, fields: SignedFields, sigHex: string): Promise<boolean> {
  const presented = fromHex(sigHex);
  if (presented === undefined || presented.length !== SIGNATURE_BYTES) return false;
  return crypto.subtle.verify('HMAC', await key.hmacKey(), presented, canonicalMessage(fields));
}
