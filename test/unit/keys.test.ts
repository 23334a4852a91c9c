import { describe, expect, it } from 'vitest';
import { hashTagOf } from '../../src/hash-tag';
import { isValidEventId, isValidKeyName } from '../../src/keys';

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
