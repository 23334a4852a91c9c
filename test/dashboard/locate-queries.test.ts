/**
 * Find by id and the saga trail against a real Redis on every client: states come from real
 * poll runs of two groups (billing rejects or retains, audit commits), so pending, acked,
 * dead-lettered and not-yet-delivered are what Redis says, not what a fixture claims.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { locateId } from '../../src/dashboard/queries/locate';
import { scanStream } from '../../src/dashboard/queries/recent-entries';
import { sagaTrail } from '../../src/dashboard/queries/saga-trail';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { appendOrder, dashboardDeployment, dashboardRuntime, drain, ordersOf, resultsOf } from './fixture';

describe.each(clientKinds)('find by id and saga trail over $name', (kind) => {
  let admin: Redis;
  let runtime: DeploymentRuntime;
  let orders: string;
  let results: string;
  let dlt: string;

  useRedisPerTest(kind, ({ admin: a, port, stream }) => {
    admin = a;
    const config = dashboardDeployment(stream);
    runtime = dashboardRuntime(config, port);
    orders = ordersOf(config);
    results = resultsOf(config);
    dlt = config.consumers.get('billing')!.config.keys.dlt;
  });
  beforeEach(async () => {
    await drain(runtime, 'billing');
    await drain(runtime, 'audit');
  });

  it('an entry id: pending for one group (consumer, idle, deliveries), not delivered, then acked, for the other', async () => {
    const id = await appendOrder(admin, orders, 'e1', 'retry later');
    await drain(runtime, 'billing');

    const before = await locateId(runtime.port, runtime.config, id);
    expect(before.kind).toBe('entry_id');
    expect(before.entries).toHaveLength(1);
    expect(before.entries[0]).toMatchObject({ stream: orders, entryId: id, foundBy: 'entry_id', inStream: true });
    expect(before.entries[0]!.groups).toEqual([
      { group: 'audit', state: 'not_delivered' },
      { group: 'billing', state: 'pending', consumer: 'billing', idleMs: expect.any(Number), deliveries: 1 },
    ]);

    await drain(runtime, 'audit');
    const after = await locateId(runtime.port, runtime.config, id);
    expect(after.entries[0]!.groups.map((g) => [g.group, g.state])).toEqual([
      ['audit', 'acked'],
      ['billing', 'pending'],
    ]);
  });

  it('an event id found by scan: dead-lettered with its reason for one group, acked for the other', async () => {
    const id = await appendOrder(admin, orders, 'evt-9', 'reject this');
    await drain(runtime, 'billing');
    await drain(runtime, 'audit');
    const dltId = (await admin.xrange(dlt, '-', '+'))[0]![0];

    const found = await locateId(runtime.port, runtime.config, 'evt-9');
    expect(found.kind).toBe('event_or_instance_id');
    expect(found.entries.map((e) => [e.entryId, e.foundBy])).toEqual([[id, 'scan']]);
    expect(found.entries[0]!.groups).toEqual([
      { group: 'audit', state: 'acked' },
      { group: 'billing', state: 'dead_lettered', reason: 'order_unknown', dltId },
    ]);
    expect(found.deadLetters.map((d) => [d.stream, d.record.id, d.record.reason])).toEqual([[orders, dltId, 'order_unknown']]);

    const byRecordId = await locateId(runtime.port, runtime.config, dltId);
    expect(byRecordId.deadLetters.map((d) => d.record.sourceEntryId)).toEqual([id]);
    expect(byRecordId.entries.map((e) => [e.entryId, e.foundBy])).toEqual([[id, 'dead_letter']]);
  });

  it('an event id is matched on its exact bytes: an entry whose id only differs by a BOM is another event (SPEC §3.4)', async () => {
    const id = await appendOrder(admin, orders, 'evt-7', 'ok');
    const other = await appendOrder(admin, orders, '\ufeffevt-7', 'ok');
    await drain(runtime, 'billing');
    await drain(runtime, 'audit');

    const found = await locateId(runtime.port, runtime.config, 'evt-7');
    expect(found.entries.map((e) => e.entryId)).toEqual([id]);
    expect(found.deadLetters).toEqual([]);
    // The other one was dead-lettered event_id_invalid by each group, each record naming it by its own id.
    const records = (await admin.xrange(dlt, '-', '+')).map(([, flat]) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]]] : []))));
    const invalid = { source_entry_id: other, event_id: '\ufeffevt-7', reason: 'event_id_invalid' };
    expect(records.map((r) => r.group).sort()).toEqual(['audit', 'billing']);
    expect(records).toEqual([expect.objectContaining(invalid), expect.objectContaining(invalid)]);
  });

  it('an event id beyond the scan is found through the publisher dedupe record', async () => {
    const [published] = await runtime.publisherFor('shop').publishBatch([{ eventType: 'order.placed', eventId: 'pub-1', payload: 'ok' }]);
    for (let i = 0; i < 3; i++) await appendOrder(admin, orders, `later-${i}`, 'ok');

    const found = await locateId(runtime.port, runtime.config, 'pub-1', { scanLimit: 2 });
    expect(found.entries.map((e) => [e.stream, e.entryId, e.foundBy, e.inStream])).toEqual([[orders, published!.entryId, 'dedupe_record', true]]);
    expect(found.entries[0]!.groups.map((g) => g.state)).toEqual(['not_delivered', 'not_delivered']);
    expect(Buffer.from(found.entries[0]!.fields!.get('event_id')!).toString()).toBe('pub-1');
    expect(found.searched.find((s) => s.stream === orders)).toMatchObject({ scanned: 2 });

    const missed = await locateId(runtime.port, runtime.config, 'later-0', { scanLimit: 2 });
    expect(missed.entries).toEqual([]);
  });

  it('an entry trimmed after dead-lettering is located through its DLT record, fields from the record', async () => {
    const id = await appendOrder(admin, orders, 'gone-1', 'bad total');
    await drain(runtime, 'billing');
    await admin.xdel(orders, id);

    const found = await locateId(runtime.port, runtime.config, 'gone-1');
    expect(found.entries).toHaveLength(1);
    expect(found.entries[0]).toMatchObject({ entryId: id, foundBy: 'dead_letter', inStream: false });
    expect(Buffer.from(found.entries[0]!.fields!.get('payload')!).toString()).toBe('bad total');
    expect(found.entries[0]!.groups.find((g) => g.group === 'billing')).toMatchObject({ state: 'dead_lettered', reason: 'total_invalid' });
  });

  it('an unknown id finds nothing and says how far it searched', async () => {
    await appendOrder(admin, orders, 'x', 'ok');
    const found = await locateId(runtime.port, runtime.config, 'nowhere', { scanLimit: 50 });
    expect(found).toMatchObject({ entries: [], deadLetters: [], scanLimit: 50 });
    expect(found.searched).toEqual([
      { stream: orders, scanned: 1, scanStoppedBy: 'end', dltScanned: 0, dltScanStoppedBy: 'end', sagaEntries: 0 },
      { stream: results, scanned: 0, scanStoppedBy: 'end', dltScanned: 0, dltScanStoppedBy: 'end', sagaEntries: 0 },
    ]);
  });

  it('scans newest first in pages, stopping at the entry limit or the byte budget and saying which', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(await appendOrder(admin, orders, `s${i}`, 'x'.repeat(1_000)));
    const seen: string[] = [];
    const all = await scanStream(runtime.port, orders, { limit: 1_000 }, (_item, id) => void seen.push(id));
    expect(all).toEqual({ scanned: 120, last: ids[0], stoppedBy: 'end' });
    expect(seen).toEqual([...ids].reverse());

    expect(await scanStream(runtime.port, orders, { limit: 70 }, () => undefined)).toEqual({ scanned: 70, last: ids[50], stoppedBy: 'limit' });
    // About 1 KB per entry: a 5 KB budget stops after the first page (10 entries).
    const small = await scanStream(runtime.port, orders, { limit: 1_000, byteBudget: 5_000 }, () => undefined);
    expect(small).toEqual({ scanned: 10, last: ids[110], stoppedBy: 'bytes' });
    const resumed = await scanStream(runtime.port, orders, { limit: 1_000, resumeAfter: small.last }, () => true);
    expect(resumed).toEqual({ scanned: 1, last: ids[109], stoppedBy: 'visitor' });
    const oldest = await scanStream(runtime.port, orders, { limit: 3, order: 'oldest' }, () => undefined);
    expect(oldest).toEqual({ scanned: 3, last: ids[2], stoppedBy: 'limit' });
  });

  it('a saga instance: its commands and results across streams in append order, each with its state per group', async () => {
    // Entries of two streams appended in one millisecond get equal ids; the envelope times
    // (consistent here, as one orchestrator's clock makes them) order those.
    const command = (id: string, instance: string, step: string, at = '2026-11-30T20:00:00Z') =>
      JSON.stringify({ command_id: id, instance_id: instance, step, action: 'execute', issued_at: at, input: {} });
    const c1 = await appendOrder(admin, orders, 'c1', command('c1', 'inst-1', 'reserve'));
    await appendOrder(admin, orders, 'other', command('other', 'inst-2', 'reserve'));
    const r1 = await appendOrder(admin, results, 'r1', JSON.stringify({ result_id: 'r1', instance_id: 'inst-1', step: 'reserve', outcome: 'failed', error: { code: 'no_stock' }, completed_at: '2026-11-30T20:00:01Z' }));
    const c2 = await appendOrder(admin, orders, 'c2', command('c2', 'inst-1', 'reject-step', '2026-11-30T20:00:02Z'));
    await drain(runtime, 'billing');

    const trail = await sagaTrail(runtime.port, runtime.config, 'inst-1');
    expect(trail.steps.map((s) => [s.stream, s.entryId, s.kind, s.step, s.outcome, s.errorCode, s.at])).toEqual([
      [orders, c1, 'command', 'reserve', undefined, undefined, '2026-11-30T20:00:00Z'],
      [results, r1, 'result', 'reserve', 'failed', 'no_stock', '2026-11-30T20:00:01Z'],
      [orders, c2, 'command', 'reject-step', undefined, undefined, '2026-11-30T20:00:02Z'],
    ]);
    expect(trail.steps[0]!.groups.map((g) => [g.group, g.state])).toEqual([
      ['audit', 'not_delivered'],
      ['billing', 'acked'],
    ]);
    expect(trail.steps[1]!.groups).toEqual([]);
    expect(trail.steps[2]!.groups.find((g) => g.group === 'billing')).toMatchObject({ state: 'dead_lettered', reason: 'order_unknown' });
    expect(trail.steps[2]!.deadLetters.map((r) => r.reason)).toEqual(['order_unknown']);

    const located = await locateId(runtime.port, runtime.config, 'inst-1');
    expect(located.searched.map((s) => s.sagaEntries)).toEqual([2, 1]);

    // The scan is bounded: with room for the newest entry only, the oldest step is not seen.
    const narrow = await sagaTrail(runtime.port, runtime.config, 'inst-1', { scanLimit: 1 });
    expect(narrow.steps.map((s) => s.entryId)).toEqual([r1, c2]);
  });
});
