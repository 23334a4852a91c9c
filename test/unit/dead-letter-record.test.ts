/**
 * SPEC §3.3: DLT records parse into their fields and the original entry, and the original
 * entry yields the same marker key settle wrote (the rule lives in settle.ts only).
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { fieldText } from '../../src/entry/entry';
import { markerKeyFor } from '../../src/entry/marker-key';
import type { RedisPort, RedisReply } from '../../src/redis/port';
import { listDeadLetters } from '../../src/redrive/list';
import { unpackFields } from '../../src/redrive/packed';
import { originalEntry, parseDeadLetterRecord } from '../../src/redrive/record';

const bytes = (text: string) => new TextEncoder().encode(text);
const item = (id: string, fields: Array<[string, string | Uint8Array]>): RedisReply => [
  bytes(id),
  fields.flatMap(([name, value]) => [bytes(name), typeof value === 'string' ? bytes(value) : value]),
];
const config = parseConsumerConfig({ stream: 'orders', group: 'g', consumer: 'c', runBudgetMs: 1_000, minIdleMs: 2_000 });

describe('dead-letter records', () => {
  it('parses the record fields and the original entry, bytes and order kept', () => {
    const binary = new Uint8Array([0xff, 0x00, 0x80]);
    const record = parseDeadLetterRecord(
      item('1700000000000-3', [
        ['event_id', 'e1'],
        ['reason', 'poison'],
        ['source_stream', 'orders'],
        ['source_entry_id', '1699999999999-0'],
        ['group', 'g'],
        ['deliveries', '7'],
        ['dead_lettered_at', '1700000000001'],
        ['orig_payload', binary],
        ['orig_event_id', 'e1'],
        ['orig_orig_note', 'a field that was itself prefixed'],
      ]),
    );
    expect(record).toMatchObject({
      id: '1700000000000-3',
      eventId: 'e1',
      reason: 'poison',
      sourceStream: 'orders',
      sourceEntryId: '1699999999999-0',
      group: 'g',
      deliveries: 7,
      deadLetteredAt: 1700000000001,
    });
    expect([...record.original.keys()]).toEqual(['payload', 'event_id', 'orig_note']);
    expect(record.original.get('payload')).toEqual(binary);
  });

  it('parses a record missing fields leniently, dating it by its id', () => {
    const record = parseDeadLetterRecord(item('1700000000000-0', [['reason', 'x'], ['deliveries', 'many']]));
    expect(record).toMatchObject({ eventId: '', sourceStream: '', deliveries: 0, deadLetteredAt: 1700000000000 });
    expect(record.original.size).toBe(0);
  });

  it('derives the marker settle wrote from the record: per group and source entry, whatever the event id', () => {
    const record = parseDeadLetterRecord(item('2-0', [['group', 'billing'], ['source_entry_id', '1-0'], ['orig_event_id', 'e1']]));
    expect(markerKeyFor(config.keys, record.group, record.sourceEntryId)).toBe('orders:dlt:marker:billing:1-0');
    const overridden = parseConsumerConfig({ stream: 'orders', group: 'g', consumer: 'c', runBudgetMs: 1_000, minIdleMs: 2_000, keys: { markerPrefix: 'm:' } });
    expect(markerKeyFor(overridden.keys, record.group, record.sourceEntryId)).toBe('m:billing:1-0');
  });
});

describe('packed originals (packed_original, SPEC §3.3)', () => {
  const str = (text: string) => {
    const body = bytes(text);
    if (body.length < 32) return [0xa0 | body.length, ...body];
    if (body.length < 256) return [0xd9, body.length, ...body];
    return [0xda, body.length >> 8, body.length & 0xff, ...body];
  };
  const packed = (...parts: number[][]) => new Uint8Array(parts.flat());

  it('reads every string width cmsgpack writes, and bin, in order with repeats kept', () => {
    const long = 'y'.repeat(300);
    const blob = packed([0x96], str('event_id'), str('e1'), str('payload'), str(long), str('payload'), [0xc4, 2, 0xff, 0x00]);
    expect(unpackFields(blob)?.map(([name, value]) => [Buffer.from(name).toString(), Buffer.from(value)])).toEqual([
      ['event_id', Buffer.from('e1')],
      ['payload', Buffer.from(long)],
      ['payload', Buffer.from([0xff, 0x00])],
    ]);
    const array16 = packed([0xdc, 0, 2], str('a'), str('b'));
    expect(unpackFields(array16)).toHaveLength(1);
  });

  it.each([
    ['an odd count', packed([0x93], str('a'), str('b'), str('c'))],
    ['an empty array', packed([0x90])],
    ['a map', packed([0x81], str('a'), str('b'))],
    ['a number among the values', packed([0x92], str('a'), [0x01])],
    ['bytes after the array', packed([0x92], str('a'), str('b'), [0x00])],
    ['a truncated string', packed([0x92], str('a'), [0xa5, 0x61])],
    ['nothing', packed()],
  ])('rejects %s', (_, blob) => {
    expect(unpackFields(blob)).toBeUndefined();
  });

  it('parses a packed record into its original fields, and marks unrestorable ones', () => {
    const own: Array<[string, string]> = [['reason', 'poison'], ['source_stream', 'orders'], ['group', 'g'], ['source_entry_id', '1-0']];
    const good = parseDeadLetterRecord(item('2-0', [...own, ['packed_original', packed([0x92], str('event_id'), str('e1'))]]));
    expect(good).toMatchObject({ originalForm: 'packed', unrestorable: undefined });
    expect([...good.original.keys()]).toEqual(['event_id']);
    expect(fieldText(originalEntry(good), 'event_id')).toBe('e1');

    const bad = parseDeadLetterRecord(item('2-1', [...own, ['packed_original', 'not msgpack']]));
    expect(bad).toMatchObject({ originalForm: 'packed', unrestorable: 'packed_unreadable', originalFields: [] });
    const both = parseDeadLetterRecord(item('2-2', [...own, ['orig_a', 'b'], ['packed_original', packed([0x92], str('a'), str('b'))]]));
    expect(both.unrestorable).toBe('ambiguous_original');
    const counted = parseDeadLetterRecord(item('2-3', [...own, ['orig_omitted_fields', '5002']]));
    expect(counted).toMatchObject({ originalForm: 'fields', unrestorable: 'fields_omitted' });
    const legit = parseDeadLetterRecord(item('2-4', [...own, ['orig_omitted_fields', '12']]));
    expect(legit.unrestorable).toBeUndefined();
    const plain = parseDeadLetterRecord(item('2-5', [...own, ['orig_packed', 'an original field named packed']]));
    expect(plain).toMatchObject({ originalForm: 'fields', unrestorable: undefined });
    expect(plain.originalFields.map(([name]) => name)).toEqual(['packed']);
  });
});

describe('dead-letter query', () => {
  const untouchable: RedisPort = {
    transport: 'tcp',
    cluster: false,
    exchange: () => Promise.reject(new Error('a rejected query must not reach Redis')),
    close: async () => {},
  };

  it('rejects every bad bound before sending anything', async () => {
    await expect(listDeadLetters(untouchable, 'd', { scanLimit: 0, olderThanMs: -1, newerThanMs: 1.5, after: '$' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      problems: [
        { path: 'scanLimit' },
        { path: 'olderThanMs' },
        { path: 'newerThanMs' },
        { path: 'after' },
      ],
    });
  });

  it('returns an empty page without a query when the age bound lies before the epoch', async () => {
    expect(await listDeadLetters(untouchable, 'd', { olderThanMs: 10, now: () => 5 })).toEqual({ records: [], next: undefined });
  });
});
