import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashTagOf } from '../../src/entry/hash-tag';
import { isValidEventId, isValidEventIdBytes, isValidKeyName } from '../../src/entry/keys';

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
  const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** The id whose UTF-8 is exactly these bytes is valid (SPEC §3.4: no lenient decoding). */
  const exactIdIsValid = (bytes: Uint8Array) => {
    try {
      return isValidEventId(strictUtf8.decode(bytes));
    } catch {
      return false;
    }
  };

  it('are valid exactly when they are the UTF-8 of a valid event id, decoded with nothing dropped', () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 300 });
    const asBytes = printable.map((text) => new TextEncoder().encode(text));
    const bytes = fc.oneof(
      asBytes,
      asBytes.map((b) => Uint8Array.from([0xef, 0xbb, 0xbf, ...b])), // a BOM a lenient decoder drops
      fc.constantFrom(255, 256, 257).map((n) => new Uint8Array(n).fill(0x61)),
      fc.uint8Array({ maxLength: 20 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => new TextEncoder().encode(text)),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        expect(isValidEventIdBytes(b)).toBe(exactIdIsValid(b));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['a BOM before an id', [0xef, 0xbb, 0xbf, ...new TextEncoder().encode('dup-1')]],
    ['a BOM alone', [0xef, 0xbb, 0xbf]],
    ['259 bytes that a lenient decoder reads as 256 characters', [0xef, 0xbb, 0xbf, ...new Uint8Array(256).fill(0x61)]],
    ['257 printable bytes', [...new Uint8Array(257).fill(0x61)]],
    ['a replacement character', [...new TextEncoder().encode('dup-\ufffd')]],
    ['a byte that is not UTF-8', [0x64, 0x75, 0x70, 0xff]],
    ['a tab', [...new TextEncoder().encode('dup\t1')]],
    ['a space', [...new TextEncoder().encode('dup 1')]],
    ['DEL', [0x64, 0x7f]],
    ['nothing', []],
  ])('refuses %s', (_, b) => {
    expect(isValidEventIdBytes(Uint8Array.from(b))).toBe(false);
  });

  it('accepts 1 and 256 printable ASCII bytes', () => {
    expect(isValidEventIdBytes(Uint8Array.of(0x21))).toBe(true);
    expect(isValidEventIdBytes(new Uint8Array(256).fill(0x7e))).toBe(true);
  });
});
