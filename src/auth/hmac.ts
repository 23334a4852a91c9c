/**
 * The HMAC-SHA256 primitive behind signing and verification. Every factory that signs or
 * verifies takes an engine (`hmac` option) and defaults to Web Crypto, the one
 * implementation that runs unchanged in Node, Lambda and workerd. Node entry points pass
 * `nodeHmac` from `saga-streams/node`: same algorithm, same bytes, same test vectors — but a
 * synchronous call of a few µs instead of an async Web Crypto job of ~20–40 µs, which bounds
 * consumer throughput. There is no process-wide engine: an entry point that builds its
 * consumers says which engine they use, so none can silently fall back by forgetting a
 * start-up call.
 */
import type { SecretKey } from './secret';

export interface HmacEngine {
  readonly name: string;
  /**
   * True only for an engine whose mac and verify return plain values, never promises: the
   * verifier then checks an entry without awaiting anything.
   */
  readonly synchronous?: boolean;
  /** HMAC-SHA256 of `message`. */
  mac(key: SecretKey, message: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** True when `expected` is that HMAC; compares in constant time. */
  verify(key: SecretKey, message: Uint8Array, expected: Uint8Array): boolean | Promise<boolean>;
  /**
   * Optional, synchronous engines only: true when `expectedHex` is the ASCII of that HMAC's
   * lowercase hex (a `sig` field as stored), compared in constant time. A verifier uses it
   * to check entry after entry without decoding each signature to bytes.
   */
  verifyHex?(key: SecretKey, message: Uint8Array, expectedHex: Uint8Array): boolean;
}

export const webCryptoHmac: HmacEngine = {
  name: 'webcrypto',
  synchronous: false,
  async mac(key, message) {
    return new Uint8Array(await crypto.subtle.sign('HMAC', await key.hmacKey(), message));
  },
  async verify(key, message, expected) {
    // crypto.subtle.verify compares in constant time.
    return crypto.subtle.verify('HMAC', await key.hmacKey(), expected, message);
  },
};
