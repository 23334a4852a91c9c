/**
 * The HMAC-SHA256 primitive behind signing and verification. The default engine is Web
 * Crypto, the one implementation that runs unchanged in Node, Lambda and workerd. On Node
 * an entry point may install the native engine from `saga-streams/node` (useNodeCrypto):
 * same algorithm, same bytes, same test vectors — but a synchronous call of ~4 µs instead
 * of an async Web Crypto job of ~20–40 µs, which bounds consumer throughput.
 */
import { concatBytes } from './canonical';
import type { SecretKey } from './secret';

export interface HmacEngine {
  readonly name: string;
  /** HMAC-SHA256 over the concatenation of `parts`. */
  mac(key: SecretKey, parts: readonly Uint8Array[]): Uint8Array | Promise<Uint8Array>;
  /** True when `expected` is that HMAC; compares in constant time. */
  verify(key: SecretKey, parts: readonly Uint8Array[], expected: Uint8Array): boolean | Promise<boolean>;
}

export const webCryptoHmac: HmacEngine = {
  name: 'webcrypto',
  async mac(key, parts) {
    return new Uint8Array(await crypto.subtle.sign('HMAC', await key.hmacKey(), concatBytes(parts)));
  },
  async verify(key, parts, expected) {
    // crypto.subtle.verify compares in constant time.
    return crypto.subtle.verify('HMAC', await key.hmacKey(), expected, concatBytes(parts));
  },
};

let engine: HmacEngine = webCryptoHmac;

/** Installs the process-wide engine (once, at start-up, before any entry is signed). */
export function setHmacEngine(next: HmacEngine): void {
  engine = next;
}

export function hmacEngine(): HmacEngine {
  return engine;
}
