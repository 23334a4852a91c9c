/**
 * Producer tokens → producer identity (SPEC §6.2). Tokens are secrets: only their digests
 * are kept, and a presented token is compared by digest, so the comparison runs over
 * equal-length inputs in constant time and neither a token's length nor the position of a
 * mismatch leaks. Every configured digest is compared on every request.
 *
 * The digest is an HMAC-SHA256 under a random key made per authenticator, through the
 * runtime's HMAC engine: on Node the native one takes about a microsecond, where a Web
 * Crypto SHA-256 was a thread-pool job of ~100 µs per request (11 % of the publish
 * profile). Keyed, the stored digests are also useless to anyone who reads them.
 */
import { constantTimeEqual } from '../auth/constant-time';
import { webCryptoHmac, type HmacEngine } from '../auth/hmac';
import { SecretKey } from '../auth/secret';
import { ConfigError } from '../ground/errors';
import { readSecrets, type SecretEnv } from '../deployment/secrets';

export interface ProducerSpec {
  readonly tokenEnv: string;
  readonly eventTypes: readonly string[];
}

export type Authentication =
  | { readonly ok: true; readonly producer: string; readonly eventTypes: ReadonlySet<string> }
  | { readonly ok: false; readonly code: 'token_missing' | 'token_invalid' };

export interface TokenAuthenticator {
  authenticate(authorization: string | undefined): Promise<Authentication>;
}

const utf8 = new TextEncoder();
/** `Bearer <token>`: the scheme is case-insensitive (RFC 9110), the token one b64token. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function randomDigestKey(): SecretKey {
  return new SecretKey(crypto.getRandomValues(new Uint8Array(32)));
}

async function digestOf(hmac: HmacEngine, key: SecretKey, token: string): Promise<Uint8Array> {
  return hmac.mac(key, utf8.encode(token));
}

/**
 * Reads every producer's token variable now, so a missing one fails at start naming the
 * variable (never a value). Two producers sharing a token would make identity ambiguous:
 * refused the same way.
 */
export function createTokenAuthenticator(
  producers: Readonly<Record<string, ProducerSpec>>,
  env: SecretEnv,
  hmac: HmacEngine = webCryptoHmac,
): TokenAuthenticator {
  const entries = Object.entries(producers);
  const secrets = readSecrets(env, entries.map(([, spec]) => spec.tokenEnv), 'publish API producer tokens');
  const seen = new Map<string, string>();
  for (const [producer, spec] of entries) {
    const token = secrets.get(spec.tokenEnv)!;
    const other = seen.get(token);
    if (other !== undefined) {
      throw new ConfigError('publish API producer tokens', [
        { path: `publishApi.producers.${producer}.tokenEnv`, message: `holds the same token as producer "${other}": identities would be ambiguous` },
      ]);
    }
    seen.set(token, producer);
  }
  const digestKey = randomDigestKey();
  const known = entries.map(([producer, spec]) => ({
    producer,
    eventTypes: new Set(spec.eventTypes),
    digest: digestOf(hmac, digestKey, secrets.get(spec.tokenEnv)!),
  }));
  secrets.clear();
  seen.clear();

  return {
    async authenticate(authorization) {
      if (authorization === undefined || authorization === '') return { ok: false, code: 'token_missing' };
      const match = BEARER.exec(authorization);
      if (!match) return { ok: false, code: 'token_invalid' };
      const presented = await digestOf(hmac, digestKey, match[1]!);
      let found: (typeof known)[number] | undefined;
      for (const candidate of known) {
        // No early exit: the time taken does not depend on which producer matched.
        if (constantTimeEqual(presented, await candidate.digest) && found === undefined) found = candidate;
      }
      return found ? { ok: true, producer: found.producer, eventTypes: found.eventTypes } : { ok: false, code: 'token_invalid' };
    },
  };
}
