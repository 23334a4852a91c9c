/**
 * settle.lua's flow arguments as Node lays them out (flow-lease.ts leaseReturnArgs): the common
 * round — every key returns one acked id, in the ack list's order — goes as one section of
 * one-id keys with the ack list untouched (text keys packed in one argument, each ended by a
 * newline); anything else is laid out section by section, the
 * ids of one-id keys and of keys returned whole leading the ack list. settle.lua reads both
 * (test/redis/flow-lease.test.ts runs them against Redis).
 */
import { describe, expect, it } from 'vitest';
import { leaseReturnArgs, type LeaseReturn } from '../../src/consume/flow-lease';

const lease = (keys: LeaseReturn['keys'], strict = false): LeaseReturn => ({ token: 'T.', limit: 1, strict, keys });
const one = (key: string, id: string) => ({ key, ids: [id], queued: [] });

describe('leaseReturnArgs', () => {
  it('sends the common round as the keys alone, with the ack list as it was', () => {
    const ackIds = ['1-0', '2-0', '3-0'];
    const { ackIds: sent, args } = leaseReturnArgs(lease([one('a', '1-0'), one('b', '2-0'), one('c', '3-0')]), ackIds);
    expect(sent).toBe(ackIds);
    expect(args).toEqual([1, 'T.', 1, 0, 0, '', 0, 3, 'a\nb\nc\n']);
  });

  it('keeps a key given as bytes (not ASCII) as its bytes: that section sends every key as an argument of its own', () => {
    const key = new TextEncoder().encode('ключ');
    expect(leaseReturnArgs(lease([one('a', '1-0'), { key, ids: ['2-0'], queued: [] }]), ['1-0', '2-0']).args).toEqual([1, 'T.', 1, 0, 0, '', 2, 'a', key]);
  });

  it('sends every key as an argument of its own when one holds a newline (the packed form ends each key with one)', () => {
    expect(leaseReturnArgs(lease([one('a', '1-0'), one('b\nc', '2-0')]), ['1-0', '2-0']).args).toEqual([1, 'T.', 1, 0, 0, '', 2, 'a', 'b\nc']);
  });

  it('lays out the same keys by sections when the ack list holds an id no key returns: one-id ids first, the rest after', () => {
    const { ackIds, args } = leaseReturnArgs(lease([one('a', '1-0'), one('b', '3-0')]), ['1-0', '2-0', '3-0']);
    expect(ackIds).toEqual(['1-0', '3-0', '2-0']);
    expect(args).toEqual([1, 'T.', 1, 0, 0, '', 0, 2, 'a\nb\n']);
  });

  it('lays out by sections when the keys come in another order than their ids in the ack list', () => {
    const { ackIds, args } = leaseReturnArgs(lease([one('b', '2-0'), one('a', '1-0')]), ['1-0', '2-0']);
    expect(ackIds).toEqual(['2-0', '1-0']);
    expect(args).toEqual([1, 'T.', 1, 0, 0, '', 0, 2, 'b\na\n']);
  });

  it('sends a key with a retained id by its ids, and a key of several acked ids from the ack list', () => {
    const keys = [{ key: 'k', ids: ['1-0', '2-0'], queued: [] }, one('j', '3-0'), { key: 'r', ids: ['4-0'], queued: ['4-0'] }];
    const { ackIds, args } = leaseReturnArgs(lease(keys, true), ['1-0', '2-0', '3-0']);
    expect(ackIds).toEqual(['3-0', '1-0', '2-0']);
    expect(args).toEqual([3, 'T.', 1, 1, 0, '', 0, 1, 'j\n', 'k', -2, 'r', 1, '4-0', 1, '4-0']);
  });

  // Each of these matches the ack list id for id in its first ids, so only the check named fails.
  it.each([
    {
      check: 'one id per key',
      keys: [{ key: 'k', ids: ['1-0', '2-0'], queued: [] }],
      acked: ['1-0'],
      expected: { ackIds: ['1-0'], args: [1, 'T.', 1, 0, 0, 'k', 2, '1-0', '2-0', 0] },
    },
    {
      check: 'nothing to queue',
      keys: [{ key: 'k', ids: ['1-0'], queued: ['2-0'] }],
      acked: ['1-0'],
      expected: { ackIds: ['1-0'], args: [1, 'T.', 1, 0, 0, 'k', 1, '1-0', 1, '2-0'] },
    },
  ])('lays out by sections a round that fails the common round on $check alone', ({ keys, acked, expected }) => {
    expect(leaseReturnArgs(lease(keys), acked)).toEqual(expected);
  });

  it('sends no flow section without leases', () => {
    expect(leaseReturnArgs(undefined, ['1-0'])).toEqual({ ackIds: ['1-0'], args: [0] });
  });
});
