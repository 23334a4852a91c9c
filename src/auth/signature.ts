/**
 * Signing and verifying entries (SPEC §3.2): `sig = hex(HMAC-SHA256(key, C))`, through the
 * HMAC engine the caller passes (Web Crypto unless told otherwise; Node entry points pass
 * the native one).
 */
import { canonicalMessage, type CanonicalEncoder, type SignedFields } from './canonical';
import { decodeText } from '../ground/text';
import { webCryptoHmac, type HmacEngine } from './hmac';
import { fromHex, toHex } from './hex';
import type { SecretKey } from './secret';

/** HMAC-SHA256 output length; a decoded signature of any other length cannot match. */
export const SIGNATURE_BYTES = 32;

export async function signEntry(key: SecretKey, fields: SignedFields, engine: HmacEngine = webCryptoHmac): Promise<string> {
  return toHex(await engine.mac(key, canonicalMessage(fields)));
}

/**
 * True when `sigHex` is the lowercase hex HMAC of the fields. The hex is decoded first and
 * the bytes are compared by the engine in constant time — never a short-circuiting string
 * comparison that would leak the length of a matching prefix. Synchronous when the engine
 * is (the native one): a verifier checking 500 entries a round awaits nothing per entry.
 * A verifier that checks entry after entry passes its own encoder, used only when the
 * engine is synchronous (an async engine could read the reused buffer after it changed).
 */
export function verifyEntry(
  key: SecretKey,
  fields: SignedFields,
  sigHex: string,
  engine: HmacEngine = webCryptoHmac,
  encoder?: CanonicalEncoder,
): boolean | Promise<boolean> {
  const presented = fromHex(sigHex);
  if (presented === undefined || presented.length !== SIGNATURE_BYTES) return false;
  const message = encoder !== undefined && engine.synchronous === true ? encoder.encode(fields) : canonicalMessage(fields);
  return engine.verify(key, message, presented);
}

/**
 * verifyEntry for a signature as stored: `sig` is the field's bytes. An engine with
 * `verifyHex` compares them with its hex digest directly — no text decoding, no bytes
 * decoded from hex, per entry. Only a signature of exactly 64 bytes takes that path; any
 * other is decoded and checked as verifyEntry does, so both paths give the same answer
 * for every input (a 64-byte value spells the lowercase hex digest exactly when its
 * decoded text does).
 */
export function verifyStoredSignature(
  key: SecretKey,
  fields: SignedFields,
  sig: Uint8Array,
  engine: HmacEngine,
  encoder: CanonicalEncoder,
): boolean | Promise<boolean> {
  if (engine.verifyHex !== undefined && engine.synchronous === true && sig.length === 2 * SIGNATURE_BYTES) {
    return engine.verifyHex(key, encoder.encode(fields), sig);
  }
  return verifyEntry(key, fields, decodeText(sig), engine, encoder);
}
