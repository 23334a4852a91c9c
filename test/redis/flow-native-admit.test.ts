/**
 * A native read with flow leases (SPEC §5.7, claim.lua 'admit'): the entries the read
 * delivers are admitted from their writers' key records, inside the same MULTI, by the same
 * steps as a read through claim.lua — a busy key's entry is parked (pending, delivery count
 * 0, queued, never handed to the run), a free key's entry leased, an entry without a key
 * admitted. The read goes native only while every unread entry came from a writer that
 * records keys; retention drops the records it no longer needs and the proof still holds.
 * Checked on what Redis sends back and keeps, through the run loop's own codec.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { claimOperations, claimOutcome, type ClaimPlan, type ClaimResult, type FlowLeasePlan } from '../../src/consume/claim';
import { parseConsumerConfig, type ConsumerConfig } from '../../src/consume/config';
import { exchange } from '../../src/consume/exchange';
import { ensureGroup } from '../../src/consume/groups';
import { settleCall } from '../../src/consume/settle';
import { flowQueueKey } from '../../src/entry/keys';
import { sizeKeys } from '../../src/entry/size-keys';
import type { RedisPort, RedisReply } from '../../src/redis/port';
import { asArray, asText } from '../../src/redis/reply';
import { runOperationsSettled } from '../../src/redis/script';
import { safeTrim } from '../../src/retention/trim';
import { Verdicts } from '../../src/verdict/verdict';
import { createPoller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { command } from '../../src/redis/port';
import { decodeText } from '../../src/ground/text';
import { ioredisKind } from '../support/clients';
import { claimOnce, fastConfig, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, foreignAppend, pendingRows } from '../support/redis';
import { appendScript } from '../../src/generated/lua-scripts';

const flowPlan = (token: string): FlowLeasePlan => ({ token, leaseMs: 60_000, limit: 1, strict: false });

/** One claim as the run loop sends it, and how its fresh entries were read ('lua' or 'native'). */
async function claimWith(port: RedisPort, config: ConsumerConfig, plan: Partial<ClaimPlan>): Promise<{ claim: ClaimResult; via: string }> {
  const full: ClaimPlan = { fresh: 20, reclaim: 0, allowance: 64 * 1024, alone: true, read: 'native', gate: `t${Math.random().toString(36).slice(2)}`, ...plan };
  const replies = await runOperationsSettled(port, claimOperations(config, full));
  const outcome = claimOutcome(full, replies);
  if ('error' in outcome) throw outcome.error;
  const script = full.read === 'native' ? asArray(replies[4] as RedisReply, 'exec')[0] : (replies[0] as RedisReply);
  const via = asText(asArray(script, 'claim')[5], 'via');
  return { claim: outcome.claim, via };
}

const eventIds = (claim: ClaimResult) => claim.entries.map((entry) => new TextDecoder().decode(entry.fields.get('event_id')));

describe('a native read with flow leases (ioredis)', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let config: ConsumerConfig;

  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    config = parseConsumerConfig(fastConfig(stream, { flow: { limit: 1 } }));
    // The first claim goes through claim.lua, as a run's does: it loads the script, and its read
    // lets Redis count what the group read (a group created at 0-0 has no count until it reads).
    await append(admin, stream, { event_id: 'w0', payload: 'x' });
    const [warm] = (await claimOnce(port, config, { fresh: 1, reclaim: 0 })).entries;
    await admin.xack(stream, 'g', warm!.id);
  });

  const keyRecords = async () => (await admin.zrangebylex(sizeKeys(stream).large, '[k', '+')).map((member) => member.split(' ').slice(1).join(' '));

  it('admits from the key records what a read through claim.lua admits: a busy key parked, a free one leased, one without a key handed over', async () => {
    // Another run holds key a.
    await append(admin, stream, { event_id: 'a0', payload: 'x', flow_key: 'a' });
    const other = await claimWith(port, config, { flow: flowPlan('other') });
    expect(other).toMatchObject({ via: 'native' });
    expect(eventIds(other.claim)).toEqual(['a0']);

    const ids = [
      await append(admin, stream, { event_id: 'a1', payload: 'x', flow_key: 'a' }),
      await append(admin, stream, { event_id: 'b1', payload: 'x', flow_key: 'b c' }),
      await append(admin, stream, { event_id: 'n1', payload: 'x' }),
      await append(admin, stream, { event_id: 'b2', payload: 'x', flow_key: 'b c' }),
    ];
    expect(await keyRecords()).toEqual([`${other.claim.entries[0]!.id} a`, `${ids[0]} a`, `${ids[1]} b c`, `${ids[3]} b c`]);

    const { claim, via } = await claimWith(port, config, { flow: flowPlan('mine') });
    expect(via).toBe('native');
    // a1 waits for the other run's lease; b1 and b2 go to this run's holder of 'b c', in order.
    expect(eventIds(claim)).toEqual(['b1', 'n1', 'b2']);
    expect(claim).toMatchObject({ flowParked: 1, flowParkedFresh: 1, flowParkedLimited: 0 });
    // Parked as a read through claim.lua parks: pending with no delivery counted, queued behind the key.
    const a1 = (await pendingRows(admin, stream, 'g')).find((row) => row.id === ids[0]);
    expect(a1).toMatchObject({ deliveries: 0 });
    expect(a1!.idleMs).toBeGreaterThanOrEqual(config.minIdleMs);
    expect(await admin.zcard(flowQueueKey(config.keys.flowLease))).toBe(1);
    expect(await admin.hexists(config.keys.defer, ids[0]!)).toBe(1);
    const leases = await admin.hgetallBuffer(config.keys.flowLease);
    // (The field '' only keeps the hash's encoding: lib/flow-lease.lua.)
    expect(Object.keys(leases).filter((key) => key !== '').sort()).toEqual(['a', 'b c']);
    expect(leases['b c']!.includes(Buffer.from('mine'))).toBe(true);
    expect(leases['b c']!.includes(Buffer.from(ids[3]!))).toBe(true);
    // No gate is left behind.
    expect(await admin.keys(`${sizeKeys(stream).gatePrefix}*`)).toEqual([]);
  });

  it('reads through claim.lua when ready keys took part of the fresh count, so the claim never returns more than it asked for', async () => {
    const a0 = await append(admin, stream, { event_id: 'a0', payload: 'x', flow_key: 'k' });
    const other = await claimWith(port, config, { flow: flowPlan('other') });
    expect(eventIds(other.claim)).toEqual(['a0']);
    await append(admin, stream, { event_id: 'a1', payload: 'x', flow_key: 'k' });
    await append(admin, stream, { event_id: 'a2', payload: 'x', flow_key: 'k' });
    expect((await claimWith(port, config, { flow: flowPlan('mine') })).claim).toMatchObject({ entries: [], flowParked: 2 });
    // The other run's settle frees k: its two parked entries wait in the ready queue.
    const leases = { token: 'other', limit: 1, strict: false, keys: [{ key: 'k', ids: [a0], queued: [] }] };
    const freed = await exchange(port, config, { settles: [settleCall(config, [{ entry: other.claim.entries[0]!, verdict: Verdicts.ack() }], leases)!] });
    expect(freed.settled[0]).toMatchObject({ acked: 1, readyKeys: 1 });
    for (let i = 1; i <= 4; i += 1) await append(admin, stream, { event_id: `f${i}`, payload: 'x' });

    // Four asked: the ready pass takes two (half the fresh count), the read the other two.
    const { claim, via } = await claimWith(port, config, { fresh: 4, flow: flowPlan('mine') });
    expect(via).toBe('lua');
    expect(eventIds(claim)).toEqual(['a1', 'a2', 'f1', 'f2']);
    expect((await pendingRows(admin, stream, 'g')).map((row) => row.id)).toHaveLength(4);
  });

  it('reads through claim.lua while an unread entry came from a writer that records no keys, and admits it there', async () => {
    await append(admin, stream, { event_id: 'r1', payload: 'x', flow_key: 'a' });
    // A writer from before key records: it counts the entry as 'appended' and records no key.
    const old = await foreignAppend(admin, stream, { event_id: 'o1', payload: 'x', flow_key: 'b' });
    await admin.hincrby(sizeKeys(stream).counts, 'appended', 1);

    // Without flow leases the sizes alone prove the read.
    const plain = parseConsumerConfig(fastConfig(stream, { group: 'plain' }));
    await ensureGroup(port, stream, 'plain', '0-0');
    await claimOnce(port, plain, { fresh: 10, reclaim: 0 });
    await append(admin, stream, { event_id: 'p1', payload: 'x', flow_key: 'c' });
    expect(await claimWith(port, plain, {})).toMatchObject({ via: 'native' });

    const { claim, via } = await claimWith(port, config, { flow: flowPlan('mine') });
    expect(via).toBe('lua');
    expect(eventIds(claim)).toEqual(['r1', 'o1', 'p1']);
    // o1 was admitted under a lease all the same: claim.lua read its flow_key field.
    const leases = await admin.hgetallBuffer(config.keys.flowLease);
    expect(leases['b']!.includes(Buffer.from(old))).toBe(true);
    expect(await admin.keys(`${sizeKeys(stream).gatePrefix}*`)).toEqual([]);

    // Once every group has read everything the counts start over, and the next reads are native.
    expect(await claimWith(port, config, { flow: flowPlan('mine') })).toMatchObject({ via: 'native', claim: { entries: [] } });
    await append(admin, stream, { event_id: 'r2', payload: 'x', flow_key: 'd' });
    const after = await claimWith(port, config, { flow: flowPlan('mine') });
    expect(after.via).toBe('native');
    expect(eventIds(after.claim)).toEqual(['r2']);
  });

  it('drops the key records retention no longer needs, and the read stays native', async () => {
    for (let i = 0; i < 5; i += 1) await append(admin, stream, { event_id: `t${i}`, payload: 'x', flow_key: `k${i}` });
    const first = await claimWith(port, config, { fresh: 3, flow: flowPlan('mine') });
    expect(first.via).toBe('native');
    await admin.xack(stream, 'g', ...first.claim.entries.map((entry) => entry.id));
    // The frontier is t2, the last entry read: w0, t0 and t1 go, and so do their records.
    expect(await safeTrim(port, stream)).toMatchObject({ removed: 3, status: 'trimmed' });
    const kept = (await admin.xrange(stream, '-', '+')).map(([id]) => id);
    expect(await keyRecords()).toEqual(kept.map((id, i) => `${id} k${i + 2}`));
    expect(await admin.hmget(sizeKeys(stream).counts, 'keyed', 'keyed_trimmed')).toEqual(['5', '2']);

    const rest = await claimWith(port, config, { flow: flowPlan('mine') });
    expect(rest.via).toBe('native');
    expect(eventIds(rest.claim)).toEqual(['t3', 't4']);
  });

  /** Every group reads all, one entry of an older writer forces the counts to start over (their records go). */
  const startCountsOver = async () => {
    await foreignAppend(admin, stream, { event_id: 'o', payload: 'x' });
    await admin.hincrby(sizeKeys(stream).counts, 'appended', 1);
    await claimWith(port, config, { allowance: 1024 * 1024, flow: flowPlan('mine') });
    expect(await claimWith(port, config, { allowance: 1024 * 1024, flow: flowPlan('mine') })).toMatchObject({ via: 'native', claim: { entries: [] } });
    expect(await admin.zcard(sizeKeys(stream).large)).toBe(0);
  };
  /** A group created later at 0-0 (the default start), after its run's first claim: one entry through claim.lua, which lets Redis count its lag. */
  const laterGroup = async (flow: boolean) => {
    await ensureGroup(port, stream, 'h', '0-0');
    const h = parseConsumerConfig(fastConfig(stream, { group: 'h', ...(flow ? { flow: { limit: 1 } } : {}) }));
    const first = await claimOnce(port, h, { fresh: 1, reclaim: 0, ...(flow ? { flow: flowPlan('h-run') } : {}) });
    expect(eventIds(first)).toEqual(['w0']);
    return h;
  };

  it('reads through claim.lua for a group created behind the point where the counts started over, and admits its entries there', async () => {
    for (let i = 0; i < 3; i += 1) await append(admin, stream, { event_id: `t${i}`, payload: 'x', flow_key: 'k' });
    await startCountsOver();
    const h = await laterGroup(true);
    const { claim, via } = await claimWith(port, h, { flow: flowPlan('h-run') });
    // Their key records are gone: natively, t0..t2 would have been handed over without a lease.
    expect(via).toBe('lua');
    expect(eventIds(claim)).toEqual(['t0', 't1', 't2', 'o']);
    const leases = await admin.hgetallBuffer(h.keys.flowLease);
    expect(leases['k']!.includes(Buffer.from('h-run'))).toBe(true);
  });

  it('reads through claim.lua for a group created behind a trim frontier whose records retention dropped', async () => {
    for (let i = 0; i < 5; i += 1) await append(admin, stream, { event_id: `t${i}`, payload: 'x', flow_key: `k${i}` });
    const first = await claimWith(port, config, { fresh: 3, flow: flowPlan('mine') });
    await admin.xack(stream, 'g', ...first.claim.entries.map((entry) => entry.id));
    // Approximate and bounded: Redis frees no whole node, so every entry stays; their records below the frontier go.
    expect(await safeTrim(port, stream, { limit: 2 })).toMatchObject({ removed: 0, mode: 'approximate' });
    expect(await keyRecords()).toHaveLength(3);
    const h = await laterGroup(true);
    const { claim, via } = await claimWith(port, h, { flow: flowPlan('h-run') });
    expect(via).toBe('lua');
    expect(eventIds(claim)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    // Admitted there: h's run holds each key.
    expect(Object.keys(await admin.hgetall(h.keys.flowLease)).filter((key) => key !== '').sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
  });

  it('keeps the byte budget for a group created behind the point where the counts started over (their size records are gone too)', async () => {
    for (let i = 0; i < 4; i += 1) await append(admin, stream, { event_id: `big${i}`, payload: 'x'.repeat(30 * 1024) });
    await startCountsOver();
    const { claim, via } = await claimWith(port, await laterGroup(false), { allowance: 64 * 1024, alone: false });
    // Natively the read was counted at 1 KiB an entry and delivered 120 KiB.
    expect(via).toBe('lua');
    expect(claim.cut).toBe(true);
    expect(claim.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(eventIds(claim)).toEqual(['big0', 'big1']);
  });

  it('starts none of a native read whose entries name more flow keys than its window held key records (a writer that counted one and recorded none)', async () => {
    await append(admin, stream, { event_id: 'r1', payload: 'x', flow_key: 'a' });
    // Counted as an unkeyed append by a writer of this version, yet it names a key: no record.
    await foreignAppend(admin, stream, { event_id: 'x1', payload: 'x', flow_key: 'b' });
    await admin.hincrby(sizeKeys(stream).counts, 'plain', 1);
    await expect(claimWith(port, config, { flow: flowPlan('mine') })).rejects.toThrow(/delivered 2 entries naming a flow key, its window held 1 key records/);
    // Both stay pending for their min idle, and b was never leased.
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(2);
    expect(await admin.hexists(config.keys.flowLease, 'b')).toBe(0);
  });

  it.each([
    ["no '<id> <key>' behind 'k<padded id> '", (record: string) => `${record.slice(0, 43)}broken`],
    ['an empty id', (record: string) => `${record.slice(0, 43)} a`],
  ])('refuses a native read whose window holds a key record of a shape no writer leaves (%s): none of its entries start or are leased', async (_, broken) => {
    await append(admin, stream, { event_id: 'r1', payload: 'x', flow_key: 'a' });
    const [record] = await admin.zrangebylex(sizeKeys(stream).large, '[k', '+');
    await admin.zrem(sizeKeys(stream).large, record!);
    await admin.zadd(sizeKeys(stream).large, 0, broken(record!));
    await expect(claimWith(port, config, { flow: flowPlan('mine') })).rejects.toThrow(/malformed flow key record/);
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(1);
    expect(await admin.hexists(config.keys.flowLease, 'a')).toBe(0);
  });

  it('admits two entries of one key whose ids are 32 bytes or more (a MessagePack str8 in the lease value) under one holder', async () => {
    // An explicit id that long (a producer's own ids): appended as append.lua appends, with its records.
    const appendAt = appendScript.text.replace("redis.call('XADD', KEYS[1], '*', unpack(ARGV))", "redis.call('XADD', KEYS[1], ARGV[1], unpack(ARGV, 2))").replace('record_entry_size(KEYS[2], KEYS[3], id, ARGV, 1)', 'record_entry_size(KEYS[2], KEYS[3], id, ARGV, 2)');
    const sizes = sizeKeys(stream);
    const longIds = ['18446744073709551000-100000000000', '18446744073709551000-100000000001'];
    for (const [i, id] of longIds.entries()) await admin.eval(appendAt, 3, stream, sizes.counts, sizes.large, id, 'event_id', `l${i}`, 'payload', 'x', 'flow_key', 'k');
    const { claim, via } = await claimWith(port, config, { flow: flowPlan('mine') });
    expect(via).toBe('native');
    expect(claim.entries.map((entry) => entry.id)).toEqual(longIds);
    expect(claim).toMatchObject({ flowParked: 0 });
    const value = (await admin.hgetBuffer(config.keys.flowLease, 'k'))!;
    for (const id of longIds) expect(value.includes(Buffer.concat([Buffer.from([0xd9, id.length]), Buffer.from(id)]))).toBe(true);
    // Returned by the settle as the run returns it, the key is free again.
    const leases = { token: 'mine', limit: 1, strict: false, keys: [{ key: 'k', ids: longIds, queued: [] }] };
    const settled = await exchange(port, config, { settles: [settleCall(config, claim.entries.map((entry) => ({ entry, verdict: Verdicts.ack() })), leases)!] });
    expect(settled.settled[0]).toMatchObject({ acked: 2, leaseLost: 0 });
    expect(await admin.hexists(config.keys.flowLease, 'k')).toBe(0);
  });

  it('gives back, when the run stops, the lease of an entry its claim script reclaimed before the native read beside it failed', async () => {
    const run = parseConsumerConfig(fastConfig(stream, { consumer: 'live', batch: 2, reclaimEveryRounds: 1, flow: { limit: 1 } }));
    const e = await append(admin, stream, { event_id: 'e', payload: 'e', flow_key: 'k' });
    // A run that died holding e, its lease ending at once.
    await claimOnce(port, parseConsumerConfig(fastConfig(stream, { consumer: 'dead', flow: { limit: 1 } })), { fresh: 1, reclaim: 0, flow: { ...flowPlan('dead'), leaseMs: 1 } });
    for (let i = 1; i <= 6; i += 1) await append(admin, stream, { event_id: `f${i}`, payload: `f${i}` });
    // While round 2 is handled: e becomes due (idle past min idle), and the next native read is
    // made to fail for real (its group renamed in the command: Redis answers NOGROUP inside the MULTI).
    let failReads = false;
    const faulty: RedisPort = {
      ...port,
      transport: port.transport,
      exchange: (commands) =>
        port.exchange(failReads && commands[0]?.name === 'MULTI' ? commands.map((c) => (c.name === 'XREADGROUP' ? command('XREADGROUP', 'GROUP', 'no-such-group', ...c.args.slice(2)) : c)) : commands),
    };
    const poller = createPoller({
      port: faulty,
      config: run,
      process: createProcessor(rawPayload, async ({ payload }) => {
        // In round 2, once the claim beside it is surely out (it must not see e due yet).
        if (decodeText(payload) === 'f3') {
          await sleepMs(50);
          await admin.xclaim(stream, 'g', 'dead', 0, e, 'IDLE', 60_000, 'JUSTID');
          failReads = true;
        }
        return 'committed' as const;
      }),
    });
    await expect(poller.run({ mode: 'drain' })).rejects.toThrow(/NOGROUP/);
    // The failed claim reclaimed e under the run's lease; the stop path released e and gave the
    // lease back: k is free at once, not held until the run's deadline.
    expect((await pendingRows(admin, stream, 'g')).find((row) => row.id === e)).toMatchObject({ consumer: 'live' });
    expect(await admin.hexists(run.keys.flowLease, 'k')).toBe(0);
  });

  it.each([
    ['a share', (c: ConsumerConfig) => c, { share: 1 }],
    ['a rate limit', () => parseConsumerConfig(fastConfig(stream, { flow: { limit: 1 }, rateLimit: { limit: 1, perMs: 60_000 } })), {}],
  ] as const)('reads through claim.lua with %s, which counts over every entry it admits', async (_, configOf, extra) => {
    await append(admin, stream, { event_id: 's1', payload: 'x', flow_key: 'a' });
    await append(admin, stream, { event_id: 's2', payload: 'x', flow_key: 'a' });
    const { claim, via } = await claimWith(port, configOf(config), { flow: { ...flowPlan('mine'), ...extra } });
    expect(via).toBe('lua');
    // One entry of key a (the share), or one start in the window (the rate limit).
    expect(eventIds(claim)).toEqual(['s1']);
    expect(await admin.keys(`${sizeKeys(stream).gatePrefix}*`)).toEqual([]);
  });
});
