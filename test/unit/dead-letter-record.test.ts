/**
 * SPEC §3.3: DLT records parse into their fields and the original entry, and the original
 * entry yields the same marker key settle wrote (the rule lives in settle.ts only).
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/config';
import { markerKey } from '../../src/keys';
import type { RedisPort, RedisReply } from '../../src/redis/port';
import { listDeadLetters } from '../../src/redrive/list';
import { parseDeadLetterRecord } from '../../src/redrive/record';

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
    expect(markerKey(config.keys, record.group, record.sourceEntryId)).toBe('orders:dlt:marker:billing:1-0');
    const overridden = parseConsumerConfig({ stream: 'orders', group: 'g', consumer: 'c', runBudgetMs: 1_000, minIdleMs: 2_000, keys: { markerPrefix: 'm:' } });
    expect(markerKey(overridden.keys, record.group, record.sourceEntryId)).toBe('m:billing:1-0');
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
