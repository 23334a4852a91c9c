/**
 * The MessagePack reader (src/ground/msgpack.ts) over the formats cmsgpack writes, and the
 * lease state's rate times read through it (consume/flow-lease.ts leaseTimes). Bytes here are
 * written by hand after the MessagePack spec; the Redis tests read what cmsgpack really wrote.
 */
import { describe, expect, it } from 'vitest';
import { leaseTimes } from '../../src/consume/flow-lease';
import { MsgpackReader, readArrayLength, readByteString, readNumber, skipValue } from '../../src/ground/msgpack';

const reader = (...bytes: number[]) => new MsgpackReader(Uint8Array.from(bytes));
const u64 = (value: number) => {
  const view = new DataView(new ArrayBuffer(9));
  view.setUint8(0, 0xcf);
  view.setBigUint64(1, BigInt(value));
  return [...new Uint8Array(view.buffer)];
};
const f64 = (value: number) => {
  const view = new DataView(new ArrayBuffer(9));
  view.setUint8(0, 0xcb);
  view.setFloat64(1, value);
  return [...new Uint8Array(view.buffer)];
};

describe('MessagePack reader', () => {
  it('reads every integer and float format', () => {
    expect(readNumber(reader(0x05))).toBe(5);
    expect(readNumber(reader(0xff))).toBe(-1);
    expect(readNumber(reader(0xcc, 0xc8))).toBe(200);
    expect(readNumber(reader(0xcd, 0x01, 0x00))).toBe(256);
    expect(readNumber(reader(0xce, 0x00, 0x01, 0x00, 0x00))).toBe(65_536);
    expect(readNumber(reader(...u64(1_809_123_011_392)))).toBe(1_809_123_011_392);
    expect(readNumber(reader(0xd0, 0x80))).toBe(-128);
    expect(readNumber(reader(0xd1, 0xff, 0x00))).toBe(-256);
    expect(readNumber(reader(0xd2, 0xff, 0xff, 0xff, 0xfe))).toBe(-2);
    expect(readNumber(reader(0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd))).toBe(-3);
    expect(readNumber(reader(0xca, 0x3f, 0xc0, 0x00, 0x00))).toBe(1.5);
    expect(readNumber(reader(...f64(1_809_123_011_392.25)))).toBe(1_809_123_011_392.25);
  });

  it('reads arrays and byte strings of every width', () => {
    expect(readArrayLength(reader(0x93))).toBe(3);
    expect(readArrayLength(reader(0xdc, 0x01, 0x00))).toBe(256);
    expect(readArrayLength(reader(0xdd, 0x00, 0x01, 0x00, 0x00))).toBe(65_536);
    expect([...readByteString(reader(0xa2, 0x68, 0x69))!]).toEqual([0x68, 0x69]);
    expect([...readByteString(reader(0xd9, 0x01, 0x7a))!]).toEqual([0x7a]);
    expect([...readByteString(reader(0xc4, 0x01, 0x00))!]).toEqual([0x00]);
    expect([...readByteString(reader(0xda, 0x00, 0x01, 0x41))!]).toEqual([0x41]);
  });

  it('skips nested arrays, strings, numbers, nil and booleans to the value after them', () => {
    const r = reader(0x92, 0x93, 0xa1, 0x74, 0xcb, ...f64(2.5).slice(1), 0xc0, 0xc3, 0x07);
    expect(skipValue(r)).toBe(true);
    expect(readNumber(r)).toBe(7);
    expect(r.done).toBe(true);
  });

  it('reads malformed or truncated input as undefined (or false), never throwing', () => {
    expect(readNumber(reader(0xcd, 0x01))).toBeUndefined();
    expect(readNumber(reader(0xa1, 0x41))).toBeUndefined();
    expect(readNumber(reader())).toBeUndefined();
    expect(readByteString(reader(0xa3, 0x41))).toBeUndefined();
    expect(readArrayLength(reader(0x80))).toBeUndefined(); // a map: no value the scripts pack
    expect(skipValue(reader(0x92, 0x01))).toBe(false);
    expect(skipValue(reader(0xc1))).toBe(false);
    // Nesting past 16 arrays (the scripts write 2) is malformed, not a stack overflow.
    expect(skipValue(new MsgpackReader(new Uint8Array(100_000).fill(0x91)))).toBe(false);
    expect(skipValue(reader(...new Array(16).fill(0x91), 0x01))).toBe(true);
  });
});

describe('lease state rate times', () => {
  // { holders, waiting, tat, hold }: one holder { token, expires, id }, 2 waiting.
  const holders = [0x91, 0x93, 0xa2, 0x72, 0x31, ...u64(1_809_123_011_392), 0xa3, 0x31, 0x2d, 0x30];
  it('reads the TAT and the hold after the holders and the waiting count', () => {
    expect(leaseTimes(Uint8Array.from([0x94, ...holders, 0x02, ...f64(1_809_123_014_725.5), ...u64(1_809_123_011_393)]))).toEqual({ tat: 1_809_123_014_725.5, hold: 1_809_123_011_393 });
  });

  it('reads a state without times, or an unreadable one, as no times (as the scripts do)', () => {
    expect(leaseTimes(Uint8Array.from([0x92, ...holders, 0x02]))).toEqual({ tat: 0, hold: 0 });
    expect(leaseTimes(Uint8Array.from([0x94, ...holders, 0x02, 0xa1]))).toEqual({ tat: 0, hold: 0 });
    expect(leaseTimes(Uint8Array.from([0x01]))).toEqual({ tat: 0, hold: 0 });
  });
});
