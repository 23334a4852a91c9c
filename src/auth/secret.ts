/**
 * Key material that cannot leak by accident: the bytes live in a private field and every
 * way a value is usually turned into text (`util.inspect`, `JSON.stringify`, `String()`,
 * template literals) yields a redaction marker. The only way out is an HMAC CryptoKey,
 * imported non-extractable and cached, so verifying many entries imports the key once.
 */

export const REDACTED = '[redacted]';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const utf8 = new TextEncoder();

/** Web Crypto's key type, named without DOM or node: typings so the core stays platform-neutral. */
type HmacCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** What callers may hand in as a key: raw bytes, or text taken as its UTF-8 bytes. */
export type KeyInput = Uint8Array | string | SecretKey;

export class SecretKey {
  readonly #bytes: Uint8Array;
  readonly #derived = new WeakMap<object, unknown>();
  #cryptoKey: Promise<HmacCryptoKey> | undefined;

  /** Copies the bytes, so later changes to the caller's array cannot alter the key. */
  constructor(bytes: Uint8Array) {
    if (bytes.length === 0) throw new TypeError('a secret key must not be empty');
    this.#bytes = Uint8Array.from(bytes);
  }

  static from(input: KeyInput): SecretKey {
    if (input instanceof SecretKey) return input;
    return new SecretKey(typeof input === 'string' ? utf8.encode(input) : input);
  }

  static fromHex(text: string): SecretKey {
    const bytes = /^(?:[0-9a-fA-F]{2})+$/.test(text) ? Uint8Array.from(text.match(/../g)!, (h) => Number.parseInt(h, 16)) : undefined;
    if (!bytes) throw new TypeError('a hex key must be a non-empty, even-length hex string');
    return new SecretKey(bytes);
  }

  static fromBase64(text: string): SecretKey {
    let binary: string;
    try {
      binary = atob(text);
    } catch {
      throw new TypeError('a base64 key must be valid base64');
    }
    return new SecretKey(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  }

  /**
   * Key material derived from the bytes (a Web Crypto key, a Node KeyObject), made once per
   * slot and cached. The bytes reach only `make`, an engine's own import function.
   */
  derive<T>(slot: object, make: (bytes: Uint8Array) => T): T {
    if (!this.#derived.has(slot)) this.#derived.set(slot, make(this.#bytes));
    return this.#derived.get(slot) as T;
  }

  /** Length in bytes; not secret, and needed to enforce a minimum key strength. */
  get byteLength(): number {
    return this.#bytes.length;
  }

  /** The key as a non-extractable Web Crypto HMAC-SHA256 key (Node, Lambda and workerd alike). */
  hmacKey(): Promise<HmacCryptoKey> {
    this.#cryptoKey ??= crypto.subtle.importKey('raw', this.#bytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    return this.#cryptoKey;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [INSPECT](): string {
    return `SecretKey ${REDACTED}`;
  }
}
