/**
 * The HMAC-SHA256 primitive behind signing and verification. The default engine is Web
 * Crypto, the one implementation that runs unchanged in Node, Lambda and workerd. On Node
 * an entry point may install the native engine from `saga-streams/node` (useNodeCrypto):
 * same algorithm, same bytes, same test vectors — but a synchronous call of ~1 µs instead
 * of an async Web Crypto job of ~20–40 µs, which bounds consumer throughput.
 */
import type { SecretKey } from './secret';

export interface HmacEngine {
  readonly name: string;
  /**
   * True only for an engine whose mac and verify return plain values, never promises. Only
   * such an engine is handed a message buffer that the caller reuses for the next entry;
   * any other engine gets a message of its own that it may read whenever it likes.
   */
  readonly synchronous?: boolean;
  /** HMAC-SHA256 of `message`. */
  mac(key: SecretKey, message: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** True when `expected` is that HMAC; compares in constant time. */
  verify(key: SecretKey, message: Uint8Array, expected: Uint8Array): boolean | Promise<boolean>;
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

let engine: HmacEngine = webCryptoHmac;

/** Installs the process-wide engine (once, at start-up, before any entry is signed). */
export function setHmacEngine(next: HmacEngine): void {
  engine = next;
}

export function hmacEngine(): HmacEngine {
  return engine;
}
