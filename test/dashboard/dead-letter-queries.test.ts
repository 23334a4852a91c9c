/**
 * The DLT browser's reads and the dashboard's redrive, against a real Redis on every client:
 * records are produced by real poll runs (settle.lua writes them), except the hand-written
 * packed and unreadable ones, which settle writes only for entries too wide to build quickly.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { newestDeadLetters, readDeadLetter, searchDeadLetters, summarizeDeadLetters } from '../../src/dashboard/queries/dead-letters';
import { planRedrive, redriveTarget } from '../../src/dashboard/queries/redrive';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import type { ConsumerConfig } from '../../src/consume/config';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { appendOrder, dashboardDeployment, dashboardRuntime, drain, ordersOf } from './fixture';

/** A MessagePack flat array of short strings, as settle.lua packs a wide entry (cmsgpack). */
function packed(fields: Array<[string, string]>): Buffer {
  const items = fields.flat().map((text) => {
    const bytes = Buffer.from(text);
    return Buffer.concat([Buffer.from([0xa0 | bytes.length]), bytes]);
  });
  return Buffer.concat([Buffer.from([0x90 | items.length]), ...items]);
}

describe.each(clientKinds)('dashboard dead-letter queries over $name', (kind) => {
  let admin: Redis;
  let runtime: DeploymentRuntime;
  let orders: string;
  let billing: ConsumerConfig;
  let dlt: string;

  useRedisPerTest(kind, ({ admin: a, port, stream }) => {
    admin = a;
    const config = dashboardDeployment(stream);
    runtime = dashboardRuntime(config, port);
    orders = ordersOf(config);
    billing = config.consumers.get('billing')!.config;
    dlt = billing.keys.dlt;
  });

  /** Dead-letters one entry per payload through a billing run; returns the source entry ids. */
  async function deadLetter(payloads: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [i, payload] of payloads.entries()) ids.push(await appendOrder(admin, orders, `e${i}`, payload));
    await drain(runtime, 'billing');
    return ids;
  }

  it('counts reasons, most frequent first, and says how many records the counts cover', async () => {
    await deadLetter(['reject 1', 'bad 1', 'reject 2', 'ok', 'reject 3']);

    const all = await summarizeDeadLetters(runtime.port, dlt);
    expect(all).toEqual({
      dlt,
      length: 4,
      counted: 4,
      reasons: [
        { reason: 'order_unknown', count: 3 },
        { reason: 'total_invalid', count: 1 },
      ],
    });
    const newest = await summarizeDeadLetters(runtime.port, dlt, 2);
    expect(newest).toMatchObject({ length: 4, counted: 2, reasons: [{ reason: 'order_unknown', count: 2 }] });
  });

  it('pages newest first with a cursor, filtered by reason or not', async () => {
    const sources = await deadLetter(['reject a', 'bad b', 'reject c', 'reject d', 'bad e']);

    const first = await newestDeadLetters(runtime.port, dlt, { pageSize: 2 });
    expect(first.records.map((r) => r.sourceEntryId)).toEqual([sources[4], sources[3]]);
    const second = await newestDeadLetters(runtime.port, dlt, { pageSize: 2, before: first.next });
    expect(second.records.map((r) => r.sourceEntryId)).toEqual([sources[2], sources[1]]);
    const last = await newestDeadLetters(runtime.port, dlt, { pageSize: 2, before: second.next });
    expect(last).toMatchObject({ next: undefined });
    expect(last.records.map((r) => r.sourceEntryId)).toEqual([sources[0]]);

    const rejected = await newestDeadLetters(runtime.port, dlt, { pageSize: 2, reason: 'order_unknown' });
    expect(rejected.records.map((r) => r.sourceEntryId)).toEqual([sources[3], sources[2]]);
    const rest = await newestDeadLetters(runtime.port, dlt, { pageSize: 2, reason: 'order_unknown', before: rejected.next });
    expect(rest.records.map((r) => r.sourceEntryId)).toEqual([sources[0]]);
    expect(rest.next).toBeUndefined();
  });

  it('reads a record with its ids, group, deliveries and original fields; another id reads nothing', async () => {
    const [source] = await deadLetter(['reject me']);
    const [listed] = (await newestDeadLetters(runtime.port, dlt)).records;

    const record = await readDeadLetter(runtime.port, dlt, listed!.id);
    expect(record).toMatchObject({ id: listed!.id, eventId: 'e0', reason: 'order_unknown', sourceStream: orders, sourceEntryId: source, group: 'billing', deliveries: 1 });
    expect(record!.originalFields.map(([n, v]) => [n, Buffer.from(v).toString()])).toEqual([
      ['event', 'order.placed'],
      ['event_id', 'e0'],
      ['payload', 'reject me'],
    ]);
    expect(await readDeadLetter(runtime.port, dlt, '1-1')).toBeUndefined();
    expect(await readDeadLetter(runtime.port, dlt, 'not-an-id')).toBeUndefined();
  });

  it('decodes packed originals, and finds records by source entry id within the scan', async () => {
    const packedId = (await admin.xadd(dlt, '*', 'event_id', 'w1', 'reason', 'too_wide_test', 'source_stream', orders, 'source_entry_id', '5-0', 'group', 'billing',
      'deliveries', '2', 'dead_lettered_at', '1000', 'packed_original', packed([['event', 'order.placed'], ['payload', '<b>wide</b>']]))) as string;

    const record = await readDeadLetter(runtime.port, dlt, packedId);
    expect(record).toMatchObject({ originalForm: 'packed', unrestorable: undefined, deliveries: 2, deadLetteredAt: 1000 });
    expect(record!.originalFields.map(([n, v]) => [n, Buffer.from(v).toString()])).toEqual([
      ['event', 'order.placed'],
      ['payload', '<b>wide</b>'],
    ]);
    const found = await searchDeadLetters(runtime.port, dlt, (r) => r.sourceEntryId === '5-0', 10);
    expect(found).toMatchObject({ scan: { scanned: 1, stoppedBy: 'end' }, records: [{ id: packedId }] });
  });

  it('plans and redrives every record of a reason through redrive.lua, reporting refusals with their reason', async () => {
    const sources = await deadLetter(['reject 1', 'bad 1', 'reject 2']);
    const unreadable = (await admin.xadd(dlt, '*', 'event_id', 'x', 'reason', 'order_unknown', 'source_stream', orders, 'source_entry_id', '7-0', 'group', 'billing',
      'packed_original', Buffer.from([0x01, 0x02]))) as string;

    const plan = await planRedrive(runtime.port, billing, { kind: 'reason', reason: 'order_unknown' });
    expect(plan.more).toBe(false);
    expect(plan.records.map((p) => [p.record.sourceEntryId, p.status, p.unrestorable])).toEqual([
      [sources[0], 'redrive', undefined],
      [sources[2], 'redrive', undefined],
      ['7-0', 'unrestorable', 'packed_unreadable'],
    ]);
    expect(await admin.xlen(dlt)).toBe(4); // planning changed nothing

    const result = await redriveTarget(runtime.port, billing, { kind: 'reason', reason: 'order_unknown' });
    expect(result.outcomes.map((o) => o.status)).toEqual(['redriven', 'redriven', 'unrestorable']);
    expect(result.outcomes[2]).toEqual({ id: unreadable, status: 'unrestorable', reason: 'packed_unreadable' });
    const left = await admin.xrange(dlt, '-', '+');
    expect(left.map(([id]) => id)).toEqual([expect.any(String), unreadable]);
    const tail = await admin.xrevrange(orders, '+', '-', 'COUNT', 2);
    expect(tail.map(([id, fields]) => [id, fields[5]])).toEqual([
      [result.outcomes[1]!.entryId, 'reject 2'],
      [result.outcomes[0]!.entryId, 'reject 1'],
    ]);

    const again = await redriveTarget(runtime.port, billing, { kind: 'record', id: result.outcomes[0]!.id });
    expect(again.outcomes).toEqual([{ id: result.outcomes[0]!.id, status: 'missing' }]);
  });

  it('redrives large records in several redrive.lua calls, each re-reading at most about 4 MiB', async () => {
    const big = (tag: string) => `reject ${tag} ${'x'.repeat(1_500_000)}`;
    await deadLetter([big('a'), big('b'), big('c'), big('d')]);
    let scripts = 0;
    const counting = { ...runtime.port, exchange: (commands: Parameters<typeof runtime.port.exchange>[0]) => {
      scripts += commands.filter((c) => c.name === 'EVALSHA').length;
      return runtime.port.exchange(commands);
    } };

    const result = await redriveTarget(counting, billing, { kind: 'reason', reason: 'order_unknown' });

    expect(result.outcomes.map((o) => o.status)).toEqual(['redriven', 'redriven', 'redriven', 'redriven']);
    expect(scripts).toBe(2);
    expect(await admin.xlen(dlt)).toBe(0);
  });

  it('stops a reason redrive at its limit and says more remain', async () => {
    await deadLetter(['reject 1', 'reject 2', 'reject 3']);
    const plan = await planRedrive(runtime.port, billing, { kind: 'reason', reason: 'order_unknown' }, 2);
    expect(plan).toMatchObject({ more: true });
    expect(plan.records).toHaveLength(2);
    const result = await redriveTarget(runtime.port, billing, { kind: 'reason', reason: 'order_unknown' }, 2);
    expect(result.outcomes.map((o) => o.status)).toEqual(['redriven', 'redriven']);
    expect(result.more).toBe(true);
    expect(await admin.xlen(dlt)).toBe(1);
  });

});
