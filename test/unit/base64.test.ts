/** Padded base64 checks on REST replies and batch payloads must hold for strings of megabytes. */
import { describe, expect, it } from 'vitest';
import { isPaddedBase64 } from '../../src/ground/base64';
import { decodeRestReply } from '../../src/redis/upstash-reply';

describe('isPaddedBase64', () => {
  it.each([
    ['', true],
    ['QQ==', true],
    ['QUI=', true],
    ['QUJD', true],
    ['QUJDRA==', true],
    ['Q', false],
    ['QQ=', false],
    ['Q===', false],
    ['QQ==QQ==', false],
    ['QU J', false],
    ['QUJ-', false],
  ])('%j → %s', (text, valid) => {
    expect(isPaddedBase64(text)).toBe(valid);
  });

  it('checks a 12 MB string without overflowing the stack (the old pattern did at 8 MB)', () => {
    const text = 'QUJD'.repeat(3 * 1024 * 1024);
    expect(isPaddedBase64(text)).toBe(true);
    expect(decodeRestReply([text]) as Uint8Array[]).toHaveLength(1);
  });
});
