/**
 * The HMAC-SHA256 primitive behind signing and verification. The default engine is Web
 * Crypto, the one implementation that runs unchanged in Node, Lambda and workerd. On Node
 * an entry point may install the native engine from `saga-streams/node` (useNodeCrypto):
 * same algorithm, same bytes, same test vectors — but a synchronous call of ~3 µs instead
 * of an async Web Crypto job of ~20–40 µs, which bounds consumer throughput.
 */
import type { SecretKey } from './secret';

export interface HmacEngine {
  readonly name: string;
  /**
   * HMAC-SHA256 of `message`. The message may be a buffer the caller reuses: an engine
   * reads (or copies) it before returning, never after an await.
   */
  mac(key: SecretKey, message: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** True when `expected` is that HMAC; compares in constant time. Same rule for `message`. */
  verify(key: SecretKey, message: Uint8Array, expected: Uint8Array): boolean | Promise<boolean>;
}

export const webCryptoHmac: HmacEngine = {
  name: 'webcrypto',
  mac(key, message) {
    const data = message.slice(); // taken now: the caller may reuse its buffer
    return key.hmacKey().then(async (cryptoKey) => new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, data)));
  },
  verify(key, message, expected) {
    const data = message.slice();
    // crypto.subtle.verify compares in constant time.
    return key.hmacKey().then((cryptoKey) => crypto.subtle.verify('HMAC', cryptoKey, expected, data));
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
