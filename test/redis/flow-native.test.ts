/**
 * Native reads with flow leases (claim.lua, "Native reads with flow leases"; issue 27): over
 * TCP a flow claim reads fresh entries with a plain XREADGROUP, and admits them beforehand
 * from the flow-key records every writer keeps (lib/record-size.lua). A busy key's entries
 * are parked — pending, count 0, never handed over — exactly as when the entries pass
 * through Lua, and an entry no record describes (an older writer) makes the claim read
 * through Lua. Checked on what Redis sends back and holds.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RedisProcess } from '../../local/redis-server';
import { parseConsumerConfig, type ConsumerConfig } from '../../src/consume/config';
import type { FlowLeasePlan } from '../../src/consume/claim';
import { ensureGroup } from '../../src/consume/groups';
import { flowQueueKey } from '../../src/entry/keys';
import { sizeKeys } from '../../src/entry/size-keys';
import { decodeText } from '../../src/ground/text';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { claimOnce, fastConfig } from '../support/poller';
import { usePrivateRedis } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

const lease = (token: string): FlowLeasePlan => ({ token, leaseMs: 30_000, limit: 1, strict: false });

describe('native reads with flow leases (ioredis)', () => {
  let server: RedisProcess;
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let config: ConsumerConfig;
  let tests = 0;

  usePrivateRedis((h) => ({ server, admin } = h));
  beforeEach(async () => {
    stream = `flow-native:${(tests += 1)}`;
    port = connectIoredis(server.url);
    config = parseConsumerConfig(fastConfig(stream, { consumer: 'c2', flow: { limit: 1 } }));
    await ensureGroup(port, stream, 'g', '0-0');
  });
  afterEach(async () => {
    await port.close();
  });

  /** XREADGROUP calls Redis refused since the last RESETSTAT: the read beside a claim whose gate stayed shut. */
  const xreadgroupStats = async (): Promise<{ calls: number; failed: number }> => {
    const line = (await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith('cmdstat_xreadgroup:')) ?? '';
    return { calls: Number(/calls=(\d+)/.exec(line)?.[1] ?? 0), failed: Number(/failed_calls=(\d+)/.exec(line)?.[1] ?? 0) };
  };
  const eventIds = (entries: ReadonlyArray<{ fields: ReadonlyMap<string, Uint8Array> }>) => entries.map((e) => decodeText(e.fields.get('event_id')!));

  /** Key b0 first, taken by the run 'holder' (its first claim, through Lua); then a, b and unkeyed entries. */
  const holdKeyB = async (): Promise<Map<string, string>> => {
    const ids = new Map<string, string>();
    ids.set('b0', await append(admin, stream, { event_id: 'b0', payload: 'b0', flow_key: 'b' }));
    const held = await claimOnce(port, parseConsumerConfig(fastConfig(stream, { consumer: 'holder', flow: { limit: 1 } })), { fresh: 1, reclaim: 0, flow: lease('holder') });
    expect(eventIds(held.entries)).toEqual(['b0']);
    for (let i = 1; i <= 3; i += 1) {
      for (const [name, fields] of [[`a${i}`, { flow_key: 'a' }], [`b${i}`, { flow_key: 'b' }], [`u${i}`, {}]] as const) {
        ids.set(name, await append(admin, stream, { event_id: name, payload: name, ...fields }));
      }
    }
    return ids;
  };

  it('parks a busy key\'s entries before the plain read delivers them, and hands over only the others', async () => {
    const ids = await holdKeyB();
    await admin.config('RESETSTAT');
    const claim = await claimOnce(port, config, { fresh: 20, reclaim: 0, read: 'native', flow: lease('c2') });

    // One XREADGROUP, the plain one beside the script, and it was let through.
    expect(await xreadgroupStats()).toEqual({ calls: 1, failed: 0 });
    expect(eventIds(claim.entries)).toEqual(['a1', 'u1', 'a2', 'u2', 'a3', 'u3']);
    expect(claim.flowParked).toBe(3);
    expect(claim.flowParkedFresh).toBe(3);
    // Parked as a read through Lua parks: pending with count 0 and idle minIdle, queued behind the key, a not-before.
    const rows = await pendingRows(admin, stream, 'g');
    for (const name of ['b1', 'b2', 'b3']) {
      const row = rows.find((r) => r.id === ids.get(name));
      expect(row).toMatchObject({ consumer: 'c2', deliveries: 0 });
      expect(row!.idleMs).toBeGreaterThanOrEqual(config.minIdleMs);
      expect(await admin.hexists(config.keys.defer, ids.get(name)!)).toBe(1);
    }
    expect(await admin.zcard(flowQueueKey(config.keys.flowLease))).toBe(3);
    // The gate and its note of parked ids went with the transaction.
    expect(await admin.keys(`${sizeKeys(stream).gatePrefix}*`)).toEqual([]);
    // Everything handed over is pending with one delivery; nothing else was read.
    expect(rows.filter((r) => r.deliveries === 1).map((r) => r.id).sort()).toEqual([...claim.entries.map((e) => e.id), ids.get('b0')!].sort());
    expect(claim.bytes).toBeGreaterThan(0);
  });

  it('reads through Lua when an entry was appended by a writer that keeps no flow records, and still parks it', async () => {
    await holdKeyB();
    // An older writer: the entry and its count, but no flow record ('flow_recorded' not counted).
    const old = (await admin.xadd(stream, '*', 'event_id', 'b-old', 'payload', 'b-old', 'flow_key', 'b')) as string;
    await admin.hincrby(sizeKeys(stream).counts, 'appended', 1);
    await admin.config('RESETSTAT');
    const claim = await claimOnce(port, config, { fresh: 20, reclaim: 0, read: 'native', flow: lease('c2') });

    const stats = await xreadgroupStats();
    expect(stats.failed).toBe(1); // the read beside found its gate shut
    expect(stats.calls).toBeGreaterThan(1); // and the script read through Lua
    expect(eventIds(claim.entries)).toEqual(['a1', 'u1', 'a2', 'u2', 'a3', 'u3']);
    expect(claim.flowParked).toBe(4);
    expect((await pendingRows(admin, stream, 'g')).find((r) => r.id === old)).toMatchObject({ consumer: 'c2', deliveries: 0 });
  });

  it('admits only the entries the read delivers: a window cut short by the count leaves the rest unread and unleased', async () => {
    await holdKeyB();
    const claim = await claimOnce(port, config, { fresh: 4, reclaim: 0, read: 'native', flow: lease('c2') });
    // a1, b1 (parked), u1, a2: the first four after b0.
    expect(eventIds(claim.entries)).toEqual(['a1', 'u1', 'a2']);
    expect(claim.flowParked).toBe(1);
    const next = await claimOnce(port, config, { fresh: 20, reclaim: 0, read: 'native', flow: lease('c2') });
    expect(eventIds(next.entries)).toEqual(['u2', 'a3', 'u3']);
    expect(next.flowParked).toBe(2);
    // Every entry read exactly once: pending once each.
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(10);
  });
});
