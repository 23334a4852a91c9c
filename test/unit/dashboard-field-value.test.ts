/** What the dashboard shows of a stored value: capped without cutting a character, hex when not UTF-8. */
import { describe, expect, it } from 'vitest';
import { showValue } from '../../src/dashboard/queries/field-value';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('showValue', () => {
  it('shows UTF-8 text whole under the cap', () => {
    expect(showValue(bytes('héllo'), 16)).toEqual({ encoding: 'utf8', shown: 'héllo', totalBytes: 6, omittedBytes: 0 });
  });

  it('cuts over the cap before a multi-byte character, never inside it, and counts what it left out', () => {
    // "ab" then "€" (3 bytes): a cap of 4 would cut the euro sign after its second byte.
    expect(showValue(bytes('ab€cd'), 4)).toEqual({ encoding: 'utf8', shown: 'ab', totalBytes: 7, omittedBytes: 5 });
    expect(showValue(bytes('ab€cd'), 5)).toEqual({ encoding: 'utf8', shown: 'ab€', totalBytes: 7, omittedBytes: 2 });
  });

  it('shows bytes that are not UTF-8 as hex, even when the shown prefix alone would be valid text', () => {
    const value = new Uint8Array([0x61, 0x62, 0x63, 0xff]);
    expect(showValue(value, 3)).toEqual({ encoding: 'hex', shown: '616263', totalBytes: 4, omittedBytes: 1 });
    expect(showValue(new Uint8Array([0x00, 0xc3]), 8)).toEqual({ encoding: 'hex', shown: '00c3', totalBytes: 2, omittedBytes: 0 });
  });
});
