/**
 * The native engine's fast path (RFC 2104 over one-shot `crypto.hash`, buffers reused per
 * key) against `createHmac`, on random keys (shorter than, equal to and longer than the
 * 64-byte block) and random message sequences per key: empty, small, around the block and
 * padding boundaries, and past the 256 KiB one-shot limit, in orders that grow and shrink
 * the reused buffers. Any difference in a MAC, or a verify that disagrees, fails.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SecretKey } from '../../src/auth/secret';
import { CanonicalEncoder } from '../../src/auth/canonical';
import { verifyEntry, verifyStoredSignature } from '../../src/auth/signature';
import { decodeText } from '../../src/ground/text';
import { nodeHmac } from '../../src/node/crypto';

const ONE_SHOT_LIMIT = 256 * 1024;

/** Deterministic bytes from a seed (xorshift32): large messages without generating each byte. */
function bytesFrom(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 1;
  for (let i = 0; i < length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const messageLength = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 200 }),
  fc.integer({ min: 50, max: 140 }), // around one and two SHA-256 blocks with padding
  fc.integer({ min: 200, max: 70_000 }),
  fc.integer({ min: ONE_SHOT_LIMIT - 2, max: ONE_SHOT_LIMIT + 2 }),
  fc.integer({ min: ONE_SHOT_LIMIT + 3, max: 600 * 1024 }),
);
const message = fc.tuple(fc.integer(), messageLength).map(([seed, length]) => bytesFrom(seed, length));
const key = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
  fc.uint8Array({ minLength: 65, maxLength: 300 }),
  // The block size itself, where a key stops being used as is and is hashed first.
  fc.integer({ min: 63, max: 65 }).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
);

describe('the native HMAC engine', () => {
  it('equals createHmac for random keys and message sequences, and verifies exactly its own MACs', () => {
    fc.assert(
      fc.property(key, fc.array(message, { minLength: 1, maxLength: 6 }), (keyBytes, messages) => {
        const secret = new SecretKey(keyBytes);
        for (const m of messages) {
          const expected = createHmac('sha256', keyBytes).update(m).digest();
          expect(Buffer.from(nodeHmac.mac(secret, m) as Uint8Array).equals(expected)).toBe(true);
          expect(nodeHmac.verify(secret, m, expected)).toBe(true);
          const altered = Uint8Array.from(expected);
          altered[m.length % altered.length]! ^= 1;
          expect(nodeHmac.verify(secret, m, altered)).toBe(false);
          expect(nodeHmac.verify(secret, m, expected.subarray(0, 31))).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('equals createHmac when consecutive messages share a length (the reused inner view) and when they do not', () => {
    const sameSizes = fc.array(fc.tuple(fc.integer(), fc.constantFrom(0, 1, 300, 300, 301, 1_500)), { minLength: 2, maxLength: 8 });
    fc.assert(
      fc.property(key, sameSizes, (keyBytes, specs) => {
        const secret = new SecretKey(keyBytes);
        for (const [seed, length] of specs) {
          const m = bytesFrom(seed, length);
          const expected = createHmac('sha256', keyBytes).update(m).digest();
          expect(Buffer.from(nodeHmac.mac(secret, m) as Uint8Array).equals(expected)).toBe(true);
          expect(nodeHmac.verifyHex!(secret, m, new TextEncoder().encode(expected.toString('hex')))).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('checks a stored hex signature (verifyHex) against createHmac: only the lowercase digest itself passes', () => {
    const ascii = (text: string) => new TextEncoder().encode(text);
    fc.assert(
      fc.property(key, fc.array(message, { minLength: 1, maxLength: 4 }), fc.nat(63), (keyBytes, messages, at) => {
        const secret = new SecretKey(keyBytes);
        for (const m of messages) {
          const hex = createHmac('sha256', keyBytes).update(m).digest('hex');
          expect(nodeHmac.verifyHex!(secret, m, ascii(hex))).toBe(true);
          const flipped = ascii(hex);
          flipped[at]! ^= 1;
          expect(nodeHmac.verifyHex!(secret, m, flipped)).toBe(false);
          expect(nodeHmac.verifyHex!(secret, m, ascii(hex.toUpperCase()))).toBe(/[a-f]/.test(hex) ? false : true);
          expect(nodeHmac.verifyHex!(secret, m, ascii(hex.slice(0, 62)))).toBe(false);
          expect(nodeHmac.verifyHex!(secret, m, ascii(`${hex}0`))).toBe(false);
          expect(nodeHmac.verifyHex!(secret, m, new Uint8Array(0))).toBe(false);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('a stored signature', () => {
  const utf8 = new TextEncoder();
  const unicode = fc.string({ unit: 'grapheme', maxLength: 40 });
  const signedFields = fc.record({
    stream: unicode,
    eventId: unicode,
    eventType: unicode,
    payload: unicode,
    traceparent: fc.option(unicode, { nil: undefined }),
  });
  /** Presented values around the right one: case and length changes, a BOM or space before it, one digit changed. */
  const variants = (hex: string, at: number): string[] => [
    hex,
    hex.toUpperCase(),
    `\uFEFF${hex}`,
    ` ${hex}`,
    hex.slice(0, 63),
    `${hex.slice(0, at)}${hex[at] === '0' ? '1' : '0'}${hex.slice(at + 1)}`,
  ];
  const randomSig = fc.oneof(fc.uint8Array({ minLength: 64, maxLength: 64 }), fc.uint8Array({ maxLength: 70 }));

  it('is judged on its bytes exactly as verifyEntry judges its decoded text', () => {
    fc.assert(
      fc.property(key, signedFields, fc.nat(63), randomSig, (keyBytes, signed, at, random) => {
        const secret = new SecretKey(keyBytes);
        const encoder = new CanonicalEncoder();
        const hex = createHmac('sha256', keyBytes).update(new CanonicalEncoder().encode(signed)).digest('hex');
        for (const sig of [...variants(hex, at).map((text) => utf8.encode(text)), random]) {
          const expected = verifyEntry(secret, signed, decodeText(sig), nodeHmac, encoder);
          expect(verifyStoredSignature(secret, signed, sig, nodeHmac, encoder)).toBe(expected);
        }
        expect(verifyStoredSignature(secret, signed, utf8.encode(hex), nodeHmac, encoder)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
