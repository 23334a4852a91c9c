/**
 * RunLeases (flow-lease.ts) on its own: the keys each batch was admitted under, given back by
 * the round that decides the batch — found by position, or looked up when a decision is not at
 * its entry's place — never twice, and never for an entry whose handler may still run (it keeps
 * its key's slot until the lease ends). The stop path gives back what no round decided.
 */
import { describe, expect, it } from 'vitest';
import { admittedOrderingKeys, flowOrderingKey, RunLeases } from '../../src/consume/flow-lease';
import type { StreamEntry } from '../../src/entry/entry';
import { Verdicts, type Verdict } from '../../src/verdict/verdict';

const bytes = (text: string) => new TextEncoder().encode(text);
const entry = (id: string, key?: string | Uint8Array): StreamEntry => ({
  id,
  fields: new Map(key === undefined ? [] : [['flow_key', typeof key === 'string' ? bytes(key) : key]]),
  deliveries: 1,
  reclaimed: false,
});
const decided = (e: StreamEntry, verdict: Verdict = Verdicts.ack()) => ({ entry: e, verdict });
const handed = (n: number) => new Uint8Array(n).fill(1);
const returned = (leases: ReturnType<RunLeases['returnedUnseen']>) => leases?.keys.map(({ key, ids, queued }) => ({ key, ids, queued }));

describe('RunLeases', () => {
  it('admits only entries naming a key, and keeps a key as text when every byte is ASCII, else as its bytes', () => {
    const leases = new RunLeases('T.', 1, false);
    const odd = bytes('ключ');
    const batch = [entry('1-0', 'a'), entry('2-0'), entry('3-0', odd)];
    expect(leases.admitted([entry('9-0')])).toBeUndefined();
    expect(leases.admitted(batch)).toEqual({ entries: batch, keys: ['a', undefined, odd] });
  });

  it("reads a batch's ordering keys off its admission, the same as flowOrderingKey reads them off each entry", () => {
    const leases = new RunLeases('T.', 1, false);
    const batch = [entry('1-0', 'a'), entry('2-0'), entry('3-0', bytes('ключ')), entry('4-0', new Uint8Array([0x61, 0xff, 0x00]))];
    const keys = admittedOrderingKeys(leases.admitted(batch)!);
    expect(keys).toEqual(batch.map(flowOrderingKey));
    expect(keys).toEqual(['a', undefined, String.fromCharCode(...bytes('ключ')), 'a\u00ff\u0000']);
  });

  it("gives back a decided batch's keys by position, grouped by key, and never a second time", () => {
    const leases = new RunLeases('T.', 1, false);
    const batch = [entry('1-0', 'a'), entry('2-0', 'b'), entry('3-0', 'a'), entry('4-0')];
    const admitted = leases.admitted(batch);
    const decisions = batch.map((e) => decided(e));
    const back = leases.returnedBy(admitted, decisions, handed(4));
    expect(back).toMatchObject({ token: 'T.', limit: 1, strict: false });
    expect(returned(back)).toEqual([
      { key: 'a', ids: ['1-0', '3-0'], queued: [] },
      { key: 'b', ids: ['2-0'], queued: [] },
    ]);
    expect(leases.returnedBy(admitted, decisions, handed(4))).toBeUndefined();
    expect(leases.returnedUnseen([admitted])).toBeUndefined();
  });

  it('looks up a decision that is not at its entry\'s place', () => {
    const leases = new RunLeases('T.', 1, false);
    const batch = [entry('1-0', 'a'), entry('2-0', 'b')];
    const admitted = leases.admitted(batch);
    expect(returned(leases.returnedBy(admitted, [decided(batch[1]!)], handed(1)))).toEqual([{ key: 'b', ids: ['2-0'], queued: [] }]);
    // Order none: nothing is queued as a head.
    expect(returned(leases.returnedUnseen([admitted]))).toEqual([{ key: 'a', ids: ['1-0'], queued: [] }]);
  });

  it('keeps the key of an entry whose handler may still run, and the stop path does not give it back either', () => {
    const leases = new RunLeases('T.', 1, true);
    const batch = [entry('1-0', 'a'), entry('2-0', 'b'), entry('3-0', 'c')];
    const admitted = leases.admitted(batch);
    const decisions = [decided(batch[0]!, Verdicts.retain('handler_timeout')), decided(batch[1]!, Verdicts.retain('handler_error')), decided(batch[2]!)];
    // Strict order: a retained entry given back is queued as its key's head.
    expect(returned(leases.returnedBy(admitted, decisions, handed(3)))).toEqual([
      { key: 'b', ids: ['2-0'], queued: ['2-0'] },
      { key: 'c', ids: ['3-0'], queued: [] },
    ]);
    expect(leases.returnedUnseen([admitted])).toBeUndefined();
  });

  it('gives back at the stop what no round decided, batch by batch, queued as never started', () => {
    const leases = new RunLeases('T.', 1, true);
    const ahead = leases.admitted([entry('1-0', 'a'), entry('2-0')]);
    const later = leases.admitted([entry('3-0', 'b'), entry('4-0', 'a')]);
    expect(returned(leases.returnedUnseen([ahead, undefined, later]))).toEqual([
      { key: 'a', ids: ['1-0', '4-0'], queued: ['1-0', '4-0'] },
      { key: 'b', ids: ['3-0'], queued: ['3-0'] },
    ]);
    expect(leases.returnedUnseen([ahead, later])).toBeUndefined();
  });
});
