/** The flow queue's member format as the backlog probe reads it (lua/lib/flow-lease.lua flow_member). */
import { describe, expect, it } from 'vitest';
import { parseQueueMember } from '../../src/consume/flow-lease';

const member = (key: Uint8Array, ms: string, seq: string, mark: string) =>
  Uint8Array.from([...new TextEncoder().encode(String(key.length).padStart(5, '0')), ...key, 0x7c, ...new TextEncoder().encode(`${ms.padStart(20, '0')}-${seq.padStart(20, '0')}${mark}`)]);

describe('parseQueueMember', () => {
  it('reads the key bytes, the id and the mark, whatever bytes the key holds', () => {
    const key = Uint8Array.from([0x6b, 0x7c, 0xff, 0x00, 0x31]); // 'k|', a byte that is no UTF-8, NUL, '1'
    expect(parseQueueMember(member(key, '1796453840013', '7', 'h'))).toEqual({ key, id: '1796453840013-7', mark: 'h' });
    expect(parseQueueMember(member(new TextEncoder().encode('order-17'), '0', '0', 'p'))).toMatchObject({ id: '0-0', mark: 'p' });
    expect(parseQueueMember(member(new Uint8Array(0), '18446744073709551615', '18446744073709551615', 'p'))!.id).toBe('18446744073709551615-18446744073709551615');
  });

  it('refuses anything else: a wrong length, mark or separator', () => {
    const good = member(new TextEncoder().encode('k'), '5', '1', 'p');
    expect(parseQueueMember(good.subarray(0, good.length - 1))).toBeUndefined();
    expect(parseQueueMember(member(new TextEncoder().encode('k'), '5', '1', 'x'))).toBeUndefined();
    const noBar = Uint8Array.from(good);
    noBar[6] = 0x2d;
    expect(parseQueueMember(noBar)).toBeUndefined();
    expect(parseQueueMember(new TextEncoder().encode('garbage'))).toBeUndefined();
  });
});
