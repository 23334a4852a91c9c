import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashTagOf } from '../../src/hash-tag';
import { isValidEventId, isValidEventIdBytes, isValidKeyName } from '../../src/keys';

describe('key names', () => {
  it('follows Redis Cluster hash-tag rules', () => {
    expect(hashTagOf('orders:{o1}:dlt')).toBe('o1');
    expect(hashTagOf('orders:{}:x{a}')).toBe('orders:{}:x{a}');
    expect(hashTagOf('a{b}{c}')).toBe('b');
    expect(hashTagOf('plain')).toBe('plain');
  });

  it('accepts printable ASCII without spaces, 1..=256 bytes', () => {
    expect(isValidKeyName('orders:{o}')).toBe(true);
    expect(isValidKeyName('')).toBe(false);
    expect(isValidKeyName('a b')).toBe(false);
    expect(isValidKeyName('é')).toBe(false);
    expect(isValidKeyName('x'.repeat(256))).toBe(true);
    expect(isValidKeyName('x'.repeat(257))).toBe(false);
    expect(isValidEventId('evt-01H:42')).toBe(true);
    expect(isValidEventId('evt\n')).toBe(false);
  });
});

describe('event id bytes', () => {
  it('are valid exactly when their decoded text is a valid event id', () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 300 });
    const asBytes = printable.map((text) => new TextEncoder().encode(text));
    const bytes = fc.oneof(
      asBytes,
      asBytes.map((b) => Uint8Array.from([0xef, 0xbb, 0xbf, ...b])), // a BOM the decoder drops
      fc.constantFrom(255, 256, 257).map((n) => new Uint8Array(n).fill(0x61)),
      fc.uint8Array({ maxLength: 20 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => new TextEncoder().encode(text)),
    );
    const decoder = new TextDecoder();
    fc.assert(
      fc.property(bytes, (b) => {
        expect(isValidEventIdBytes(b)).toBe(isValidEventId(decoder.decode(b)));
      }),
      { numRuns: 2000 },
    );
  });
});
