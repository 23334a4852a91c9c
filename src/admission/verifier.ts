/**
 * Origin verification (SPEC §3.2, §4): decides who wrote an entry, or why it cannot be
 * trusted. A stored entry carries no connection identity, so a shared stream must carry a
 * signature; an exclusive stream is trusted by deployment (ACL) and names its producer.
 * Every failure is a dead-letter with `auth: true`, so rounds count it in `authRejected`.
 */
import { Fields, type StreamEntry } from '../entry/entry';
import { isPromiseLike, type MaybePromise } from '../ground/maybe-promise';
import { exactUtf8Text } from '../ground/text';
import { Verdicts, type Verdict } from '../verdict/verdict';
import { CanonicalEncoder, type SignedFields } from '../auth/canonical';
import { webCryptoHmac, type HmacEngine } from '../auth/hmac';
import { parseStreamAuth, type StreamAuth, type StreamAuthInput } from '../auth/modes';
import { DeadLetterReasons } from '../auth/reasons';
import type { SecretKey } from '../auth/secret';
import { verifyStoredSignature } from '../auth/signature';

export interface Authentic {
  readonly kind: 'authentic';
  /** The producer identity: the keyring entry's, or the one the route config names. */
  readonly producer: string;
}

export type OriginCheck = Authentic | Extract<Verdict, { kind: 'dead-letter' }>;

/** Synchronous when the HMAC engine is (the native one); a promise on Web Crypto. */
export type OriginVerifier = (entry: StreamEntry) => MaybePromise<OriginCheck>;

const EMPTY = new Uint8Array(0);

function reject(reason: string): OriginCheck {
  return Verdicts.deadLetter(reason, { auth: true }) as OriginCheck;
}

type WritableSignedFields = { -readonly [K in keyof SignedFields]: SignedFields[K] };

/** The exact stored bytes are what was signed; nothing is decoded and re-encoded. */
export function signedFieldsOf(stream: string | Uint8Array, entry: StreamEntry): SignedFields {
  return fillSignedFields({ stream, eventId: EMPTY, eventType: EMPTY, payload: EMPTY }, entry);
}

/** signedFieldsOf into an object the caller reuses (`stream` is left as it is). */
function fillSignedFields(target: WritableSignedFields, entry: StreamEntry): WritableSignedFields {
  const fields = entry.fields;
  target.eventId = fields.get(Fields.eventId) ?? EMPTY;
  target.eventType = fields.get(Fields.event) ?? EMPTY;
  target.payload = fields.get(Fields.payload) ?? EMPTY;
  target.traceparent = fields.get(Fields.traceparent);
  return target;
}

/** Only an explicit `true` from the engine admits an entry. */
function originOf(valid: unknown, trusted: TrustedKey): OriginCheck {
  return valid === true ? trusted.authentic : reject(DeadLetterReasons.signatureInvalid);
}

interface TrustedKey {
  readonly key: SecretKey;
  /** What an entry this key verifies is: one frozen answer per key, not an object per entry. */
  readonly authentic: Authentic;
}

function trustedKey(key: SecretKey, producer: string): TrustedKey {
  return { key, authentic: Object.freeze({ kind: 'authentic', producer }) };
}

/**
 * The key an entry's `key_id` names, if this stream trusts it: the stored bytes must spell
 * a configured key id exactly (SPEC §3.4 — a BOM or a malformed byte is not dropped to make
 * them match). In `hmac` mode they are compared with the one key id's bytes (key ids are not
 * secret): no text decoded and no object made per entry.
 */
function trustedKeyLookup(auth: Exclude<StreamAuth, { mode: 'exclusive-stream' }>): (keyId: Uint8Array) => TrustedKey | undefined {
  if (auth.mode === 'hmac-keyring') {
    const keys = new Map([...auth.keys].map(([id, k]) => [id, trustedKey(k.key, k.producer)]));
    return (keyId) => {
      const text = exactUtf8Text(keyId);
      return text === undefined ? undefined : keys.get(text);
    };
  }
  // A consumer-parsed hmac mode always names its producer (parseStreamAuth checks it).
  const only = trustedKey(auth.key, auth.producer!);
  const keyIdBytes = new TextEncoder().encode(auth.keyId);
  return (keyId) => (bytesEqual(keyId, keyIdBytes) ? only : undefined);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A verifier for entries read from `stream` (the name the consumer reads, which is the
 * name the signature must bind), checking signatures with `hmac`. Throws a ConfigError for
 * an auth unfit for a consumer.
 */
export function createOriginVerifier(
  stream: string,
  authInput: StreamAuth | StreamAuthInput,
  hmac: HmacEngine = webCryptoHmac,
): OriginVerifier {
  const auth = parseStreamAuth(authInput, 'consumer');
  if (auth.mode === 'exclusive-stream') {
    const authentic: Authentic = { kind: 'authentic', producer: auth.producer! };
    return () => authentic;
  }
  // Encoded once: the stream name is part of every signed message.
  const streamBytes = new TextEncoder().encode(stream);
  const encoder = new CanonicalEncoder();
  const trustedKeyOf = trustedKeyLookup(auth);
  // One SignedFields refilled per entry rather than an object each: it is read only while
  // verifyStoredSignature encodes it, synchronously (an async engine gets a fresh message).
  const scratch: WritableSignedFields = { stream: streamBytes, eventId: EMPTY, eventType: EMPTY, payload: EMPTY, traceparent: undefined };
  return (entry) => {
    const sig = entry.fields.get(Fields.sig);
    if (sig === undefined) return reject(DeadLetterReasons.signatureMissing);
    const keyId = entry.fields.get(Fields.keyId);
    const trusted = keyId === undefined ? undefined : trustedKeyOf(keyId);
    if (trusted === undefined) return reject(DeadLetterReasons.signatureKeyUnknown);
    const valid = verifyStoredSignature(trusted.key, fillSignedFields(scratch, entry), sig, hmac, encoder);
    return isPromiseLike(valid) ? Promise.resolve(valid).then((v) => originOf(v, trusted)) : originOf(valid, trusted);
  };
}
