/**
 * The data sections on Redis Cluster (3 masters, private): every exchange they send holds
 * keys of one stream only (stream, DLT, markers, dedupe records share its hash tag), so
 * browsing, finding and redriving work where a pipeline across slots would be refused.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { dataSections } from '../../src/dashboard/sections';
import type { RedisPort } from '../../src/redis/port';
import { uniquePrefix } from '../support/redis';
import { useClusterPerSuite } from '../support/redis-suite';
import { dashboardDeployment, dashboardRuntime, drain, mounted, ordersOf } from './fixture';

describe('dashboard data sections on Redis Cluster (ioredis)', () => {
  let admin: Cluster;
  let port: RedisPort;
  useClusterPerSuite((h) => ({ admin, port } = h));

  it('browses a dead letter, finds its event per group, and redrives it back to its stream', async () => {
    const config = dashboardDeployment(uniquePrefix());
    const runtime = dashboardRuntime(config, port);
    const orders = ordersOf(config);
    const dlt = config.consumers.get('billing')!.config.keys.dlt;
    await drain(runtime, 'audit');
    const source = (await admin.xadd(orders, '*', 'event', 'order.placed', 'event_id', 'c-1', 'payload', 'reject'))!;
    await drain(runtime, 'billing');
    const json = { headers: { accept: 'application/json' } };

    const dltApp = mounted(dataSections.dlt, 'dlt', runtime);
    const listed = (await (await dltApp.request('/ops/dlt', json)).json()) as any;
    expect(listed.streams.find((s: any) => s.stream === orders)).toMatchObject({ length: 1, reasons: [{ reason: 'order_unknown', count: 1 }] });
    const dltId = listed.records[0].id;

    const found = (await (await mounted(dataSections.find, 'find', runtime).request('/ops/find?id=c-1', json)).json()) as any;
    expect(found.entries[0]).toMatchObject({ stream: orders, entry_id: source });
    expect(found.entries[0].groups).toEqual([
      { group: 'audit', state: 'not_delivered' },
      { group: 'billing', state: 'dead_lettered', reason: 'order_unknown', dlt_id: dltId },
    ]);

    const redriven = await dltApp.request('/ops/dlt/redrive', {
      method: 'POST',
      body: new URLSearchParams({ stream: orders, id: dltId }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(((await redriven.json()) as any).outcomes).toMatchObject([{ id: dltId, status: 'redriven' }]);
    expect(await admin.xlen(dlt)).toBe(0);
    expect(await admin.xlen(orders)).toBe(2);
  });
});
