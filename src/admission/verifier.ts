/**
 * Origin verification (SPEC §3.2, §4): decides who wrote an entry, or why it cannot be
 * trusted. A stored entry carries no connection identity, so a shared stream must carry a
 * signature; an exclusive stream is trusted by deployment (ACL) and names its producer.
 * Every failure is a dead-letter with `auth: true`, so rounds count it in `authRejected`.
 */
import { Fields, type StreamEntry } from '../entry';
import { isPromiseLike, type MaybePromise } from '../ground/maybe-promise';
import { decodeText } from '../ground/text';
import { Verdicts, type Verdict } from '../verdict';
import { CanonicalEncoder, type SignedFields } from '../auth/canonical';
import { webCryptoHmac, type HmacEngine } from '../auth/hmac';
import { parseStreamAuth, type StreamAuth, type StreamAuthInput } from '../auth/modes';
import { DeadLetterReasons } from '../auth/reasons';
import type { SecretKey } from '../auth/secret';
import { verifyEntry } from '../auth/signature';

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

/** The exact stored bytes are what was signed; nothing is decoded and re-encoded. */
export function signedFieldsOf(stream: string | Uint8Array, entry: StreamEntry): SignedFields {
  return {
    stream,
    eventId: entry.fields.get(Fields.eventId) ?? EMPTY,
    eventType: entry.fields.get(Fields.event) ?? EMPTY,
    payload: entry.fields.get(Fields.payload) ?? EMPTY,
    traceparent: entry.fields.get(Fields.traceparent),
  };
}

/** Only an explicit `true` from the engine admits an entry. */
function originOf(valid: unknown, trusted: TrustedKey): OriginCheck {
  return valid === true ? { kind: 'authentic', producer: trusted.producer } : reject(DeadLetterReasons.signatureInvalid);
}

interface TrustedKey {
  readonly key: SecretKey;
  readonly producer: string;
}

/** The key the entry claims, if this stream trusts it. */
function trustedKeyOf(auth: Exclude<StreamAuth, { mode: 'exclusive-stream' }>, keyId: string | undefined): TrustedKey | undefined {
  if (keyId === undefined) return undefined;
  // A consumer-parsed hmac mode always names its producer (parseStreamAuth checks it).
  if (auth.mode === 'hmac') return keyId === auth.keyId ? { key: auth.key, producer: auth.producer! } : undefined;
  return auth.keys.get(keyId);
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
  return (entry) => {
    const sig = entry.fields.get(Fields.sig);
    if (sig === undefined) return reject(DeadLetterReasons.signatureMissing);
    const keyIdBytes = entry.fields.get(Fields.keyId);
    const trusted = trustedKeyOf(auth, keyIdBytes === undefined ? undefined : decodeText(keyIdBytes));
    if (trusted === undefined) return reject(DeadLetterReasons.signatureKeyUnknown);
    const valid = verifyEntry(trusted.key, signedFieldsOf(streamBytes, entry), decodeText(sig), hmac, encoder);
    return isPromiseLike(valid) ? Promise.resolve(valid).then((v) => originOf(v, trusted)) : originOf(valid, trusted);
  };
}
