/**
 * Flow leases (SPEC §5.7, issue 27 slice 1: per-key concurrency, order none) against Redis:
 * concurrent runs never have more handlers of one key in flight than the limit (checked by
 * the handlers themselves, with a shared in-flight count and their own timestamps); a busy
 * key's entry is parked — pending, not handled, its delivery count unchanged — and woken by
 * the settle that frees the key; a crashed run's lease blocks its key only until it ends; a
 * run that outlived its lease cannot free another run's slot (the fence), and its replayed
 * settle changes nothing more.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { parseConsumerConfig, type ConsumerConfigInput } from '../../src/consume/config';
import { flowQueueKey, flowReadyKey } from '../../src/entry/keys';
import { exchange } from '../../src/consume/exchange';
import { settleCall } from '../../src/consume/settle';
import { settleScript } from '../../src/generated/lua-scripts';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { decodeText } from '../../src/ground/text';
import { meterPort } from '../../src/redis/metered';
import { command, type RedisPort } from '../../src/redis/port';
import { RedisCommandError } from '../../src/ground/errors';
import type { RoundReport, RunReport } from '../../src/consume/report';
import { Rejection } from '../../src/verdict/verdict';
import { runReportOf } from '../../src/consume/run';
import { Verdicts } from '../../src/verdict/verdict';
import { clientKinds, type ClientKind } from '../support/clients';
import { claimOnce, fastConfig, sleepMs } from '../support/poller';
import { InFlight, runFleet as runFleetOf } from '../support/flow-fleet';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

describe.each(clientKinds)('flow leases over $name', (kind: ClientKind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (consumer: string, over: Partial<ConsumerConfigInput> = {}) =>
    parseConsumerConfig(fastConfig(stream, { consumer, batch: 10, concurrency: 4, flow: { limit: 1 }, ...over }));
  const leaseKey = () => config('c').keys.flowLease;

  const appendKeyed = async (keys: readonly string[], perKey: number) => {
    const ids = new Map<string, string>();
    for (let i = 0; i < perKey; i += 1) {
      for (const key of keys) ids.set(`${key}:${i}`, await append(admin, stream, { event_id: `${key}-${i}`, payload: `${key}:${i}`, flow_key: key }));
    }
    return ids;
  };

  /** Runs `consumers` concurrent drain runs, each on a port of its own, until `done()` or 30 s. */
  const runFleet = (consumers: number, flight: InFlight, over: Partial<ConsumerConfigInput>, workMs: number, done: () => boolean) =>
    runFleetOf({
      connect: () => kind.connect(),
      configs: Array.from({ length: consumers }, (_, i) => config(`c${i + 1}`, over)),
      handle: (text) => flight.handle(text.split(':')[0]!, text, workMs),
      done,
    });
  const sum = (reports: readonly RunReport[], field: 'flowParked' | 'flowParkedLimited' | 'flowLeaseLost' | 'acked') => reports.reduce((total, r) => total + r[field], 0);

  it('never has two handlers of one key in flight across 4 concurrent runs with limit 1, and handles every entry once', async () => {
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
    const ids = await appendKeyed(keys, 12);
    const flight = new InFlight();
    const reports = await runFleet(4, flight, {}, 5, () => flight.committed.length >= ids.size);

    expect([...flight.committed].sort()).toEqual([...ids.keys()].sort());
    for (const key of keys) {
      expect(flight.peak.get(key), key).toBe(1);
      expect(flight.overlapOf(key), key).toBe(1);
    }
    // The runs did contend: entries were parked behind a busy key, and none lost its lease.
    expect(sum(reports, 'flowParked')).toBeGreaterThan(0);
    // Parked behind a busy key, never on a limit (there is none).
    expect(sum(reports, 'flowParkedLimited')).toBe(0);
    expect(sum(reports, 'flowLeaseLost')).toBe(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(leaseKey())).toBe(0);
  });

  it('lets as many runs as the limit hold a key at once, and never one more', async () => {
    const ids = await appendKeyed(['hot'], 40);
    const flight = new InFlight();
    await runFleet(4, flight, { flow: { limit: 2 } }, 20, () => flight.committed.length >= ids.size);

    expect(flight.committed).toHaveLength(40);
    expect(flight.peak.get('hot')).toBe(2);
    expect(flight.overlapOf('hot')).toBe(2);
  });

  it('parks a busy key\'s entry unhandled, with its delivery count, and the settle that frees the key wakes it', async () => {
    const first = await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' });
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const holderStarted = new Promise<void>((resolve) => (started = resolve));
    const holderPort = kind.connect();
    const seen: string[] = [];
    const holder = createPoller({
      port: holderPort,
      config: config('holder'),
      process: createProcessor(rawPayload, async ({ payload }) => {
        seen.push(decodeText(payload));
        started();
        await holding;
        return 'committed' as const;
      }),
    });
    const holderRun = holder.run({ mode: 'drain', maxRounds: 1 });
    await holderStarted;

    const waiting = await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' });
    const other = createPoller({ port, config: config('other'), process: createProcessor(rawPayload, ({ payload }) => (seen.push(decodeText(payload)), 'committed')) });
    const parkedRun = await other.run({ mode: 'drain' });
    expect(parkedRun.flowParked).toBe(1);
    expect(parkedRun.handled).toBe(0);
    // Pending, never delivered to a handler: count 0, and a not-before at the holder's lease end.
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows.find((row) => row.id === waiting)).toMatchObject({ consumer: 'other', deliveries: 0 });
    const notBefore = Number(await admin.hget(config('c').keys.defer, waiting));
    const redisNow = Number((await admin.time())[0]) * 1000;
    expect(notBefore - redisNow).toBeGreaterThan(3_000);

    // A run that comes back while the key is still busy leaves it alone.
    const stillBusy = await other.run({ mode: 'drain' });
    expect(stillBusy.handled + stillBusy.flowParked).toBe(0);

    release();
    const holderReport = await holderRun;
    await holderPort.close();
    expect(holderReport.acked).toBe(1);
    // The holder's settle freed the key while an entry waited: the key is ready, served first by the next claim.
    expect(await admin.zrange(flowReadyKey(leaseKey()), 0, -1)).toEqual(['k']);

    const woken = await other.run({ mode: 'drain' });
    expect(woken.acked).toBe(1);
    expect(await admin.hexists(config('c').keys.defer, waiting)).toBe(0);
    expect(await admin.exists(flowReadyKey(leaseKey()))).toBe(0);
    expect(seen).toEqual(['k:0', 'k:1']);
    expect(first).not.toBe(waiting);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(leaseKey())).toBe(0);
  });

  it('lets a crashed run block its key only until its lease ends', async () => {
    const dead = parseConsumerConfig(fastConfig(stream, { consumer: 'dead', flow: { limit: 1 } }));
    const taken = await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' });
    const next = await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' });
    // A run that claims the key's first entry and dies: nothing settles, its lease ends by itself.
    const claim = await claimOnce(port, dead, { fresh: 1, reclaim: 0, flow: { token: 'dead.', leaseMs: 1_500, limit: 1, strict: false } });
    expect(claim.entries.map((e) => e.id)).toEqual([taken]);
    const leasedAt = Date.now();

    const seen: string[] = [];
    const live = createPoller({ port, config: config('live'), process: createProcessor(rawPayload, ({ payload }) => (seen.push(decodeText(payload)), 'committed')) });
    expect((await live.run({ mode: 'drain' })).flowParked).toBe(1);
    expect(seen).toEqual([]);

    await sleepMs(1_600 - (Date.now() - leasedAt));
    const after = await live.run({ mode: 'drain' });
    expect(after.acked).toBe(1);
    expect(seen).toEqual(['k:1']);
    // The dead run's own entry waits for minIdle, as any crashed run's does.
    expect((await pendingRows(admin, stream, 'g')).map((row) => [row.id, row.consumer])).toEqual([[taken, 'dead']]);
    expect(next).not.toBe(taken);
  });

  it('fences a run that outlived its lease: its settle acks, counts the loss and leaves the key to its holder; a replay changes nothing', async () => {
    const a = parseConsumerConfig(fastConfig(stream, { consumer: 'a', flow: { limit: 1 } }));
    const b = parseConsumerConfig(fastConfig(stream, { consumer: 'b', flow: { limit: 1 } }));
    const first = await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' });
    const second = await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' });
    const [claimedByA] = (await claimOnce(port, a, { fresh: 1, reclaim: 0, flow: { token: 'A.', leaseMs: 200, limit: 1, strict: false } })).entries;
    await sleepMs(300);
    const [claimedByB] = (await claimOnce(port, b, { fresh: 1, reclaim: 0, flow: { token: 'B.', leaseMs: 5_000, limit: 1, strict: false } })).entries;
    expect([claimedByA?.id, claimedByB?.id]).toEqual([first, second]);
    const held = await admin.hgetBuffer(leaseKey(), 'k');

    const key = new TextEncoder().encode('k');
    const lateSettle = settleCall(a, [{ entry: claimedByA!, verdict: Verdicts.ack() }], { token: 'A.', limit: 1, strict: false, keys: [{ key, ids: [first], queued: [] }] })!;
    const late = await exchange(port, a, { settles: [lateSettle] });
    expect(late.settled[0]).toMatchObject({ acked: 1, leaseLost: 1, readyKeys: 0 });
    expect(await admin.hgetBuffer(leaseKey(), 'k')).toEqual(held);
    const replay = await exchange(port, a, { settles: [lateSettle] });
    expect(replay.settled[0]).toMatchObject({ acked: 0, leaseLost: 1 });
    expect(await admin.hgetBuffer(leaseKey(), 'k')).toEqual(held);

    const bSettle = settleCall(b, [{ entry: claimedByB!, verdict: Verdicts.ack() }], { token: 'B.', limit: 1, strict: false, keys: [{ key, ids: [second], queued: [] }] })!;
    expect((await exchange(port, b, { settles: [bSettle] })).settled[0]).toMatchObject({ acked: 1, leaseLost: 0 });
    expect(await admin.exists(leaseKey())).toBe(0);
  });

  it('gives back the leases of what a stopped run claimed ahead and never started', async () => {
    await appendKeyed(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'], 5);
    let rounds = 0;
    const poller = createPoller({ port, config: config('c', { batch: 5 }), process: createProcessor(rawPayload, () => 'committed') });
    // A warm-up run teaches the process the handling time, so this run claims ahead from its first round.
    const warmUp = await poller.run({ mode: 'drain', maxRounds: 1 });
    const error = await poller
      .run({
        mode: 'drain',
        onRound: () => {
          rounds += 1;
          if (rounds === 2) throw new Error('dashboard down');
        },
      })
      .catch((e: unknown) => e);
    const report = runReportOf(error)!;
    expect(report.flowLeaseLost).toBe(0);
    expect(report.released).toBeGreaterThan(0);
    expect(report.acked).toBe(report.handled);
    // Every lease went back: nothing holds a key, so any run may take the released entries.
    expect(await admin.exists(leaseKey())).toBe(0);
    const rest = await createPoller({ port, config: config('d'), process: createProcessor(rawPayload, () => 'committed') }).run({ mode: 'drain' });
    expect(rest.flowParked).toBe(0);
    expect(rest.acked).toBe(40 - warmUp.acked - report.acked);
  });

  it('keeps the lease hash a hashtable while keys are leased, frees a key its run returns whole by the bytes or by decoding, and leaves no hash', async () => {
    const c = config('c');
    const [a, b, d] = [await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' }), await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' }), await append(admin, stream, { event_id: 'd', payload: 'j:0', flow_key: 'j' })];
    const e = await append(admin, stream, { event_id: 'e', payload: 'k:2', flow_key: 'k' });
    const claim = await claimOnce(port, c, { fresh: 4, reclaim: 0, flow: { token: 'T.', leaseMs: 5_000, limit: 1, strict: false } });
    expect(claim.entries.map((entry) => entry.id)).toEqual([a, b, d, e]);
    // A listpack hash finds a field by a scan; the field '' (no flow key) keeps it a hashtable, and the backlog does not count it.
    expect(await admin.object('ENCODING', leaseKey())).toBe('hashtable');
    expect(await admin.hlen(leaseKey())).toBe(3);
    const entry = (id: string) => claim.entries.find((x) => x.id === id)!;
    const settle = (keys: Array<{ key: string; ids: string[] }>) =>
      exchange(port, c, {
        settles: [settleCall(c, keys.flatMap(({ ids }) => ids.map((id) => ({ entry: entry(id), verdict: Verdicts.ack() }))), { token: 'T.', limit: 1, strict: false, keys: keys.map(({ key, ids }) => ({ key, ids, queued: [] })) })!],
      });
    // j's holder holds exactly what goes back (freed without decoding); k keeps b and e.
    expect((await settle([{ key: 'k', ids: [a] }, { key: 'j', ids: [d] }])).settled[0]).toMatchObject({ acked: 2, leaseLost: 0 });
    expect([await admin.hexists(leaseKey(), 'k'), await admin.hexists(leaseKey(), 'j')]).toEqual([1, 0]);
    // The same ids in another order than the holder's do not match its bytes: decoded, and freed all the same.
    expect((await settle([{ key: 'k', ids: [e, b] }])).settled[0]).toMatchObject({ acked: 2, leaseLost: 0 });
    expect(await admin.exists(leaseKey())).toBe(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });

  it('returns in one settle a key whose entries were all acked from the ack list, and a key with a retained entry by its ids', async () => {
    const c = config('c');
    const [a, b, d] = [await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' }), await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' }), await append(admin, stream, { event_id: 'd', payload: 'j:0', flow_key: 'j' })];
    const u = await append(admin, stream, { event_id: 'u', payload: 'none' });
    const claim = await claimOnce(port, c, { fresh: 4, reclaim: 0, flow: { token: 'T.', leaseMs: 5_000, limit: 1, strict: false } });
    const entry = (id: string) => claim.entries.find((x) => x.id === id)!;
    const leases = { token: 'T.', limit: 1, strict: false, keys: [{ key: 'k', ids: [a, b], queued: [] }, { key: 'j', ids: [d], queued: [] }] };
    const call = settleCall(c, [a, d, u].map((id) => ({ entry: entry(id), verdict: Verdicts.ack() })).concat({ entry: entry(b), verdict: Verdicts.retain('handler_error') }), leases)!;
    // j's one id leads the ack list (j is in the section of one-id keys, packed: '', 0, 1, 'j\n'); k, with b retained, sends its ids.
    const args = call.args.map(String);
    expect(args.slice(2, 6)).toEqual(['3', d, a, u]);
    expect(args.slice(6)).toEqual(['0', '2', 'T.', '1', '0', '0', '', '0', '1', 'j\n', 'k', '2', a, b, '0']);
    expect((await exchange(port, c, { settles: [call] })).settled[0]).toMatchObject({ acked: 3, leaseLost: 0 });
    // Both keys are free again, and b stays pending for its retry.
    expect(await admin.exists(leaseKey())).toBe(0);
    expect((await pendingRows(admin, stream, 'g')).map((row) => row.id)).toEqual([b]);
  });

  it('returns one-id keys, a key of several acked ids and a key whose holder is gone in one settle: each from the ack list, the lost one counted', async () => {
    const c = config('c');
    const [a, b, d, e] = [
      await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' }),
      await append(admin, stream, { event_id: 'b', payload: 'k:1', flow_key: 'k' }),
      await append(admin, stream, { event_id: 'd', payload: 'j:0', flow_key: 'j' }),
      await append(admin, stream, { event_id: 'e', payload: 'h:0', flow_key: 'h' }),
    ];
    const claim = await claimOnce(port, c, { fresh: 4, reclaim: 0, flow: { token: 'T.', leaseMs: 5_000, limit: 1, strict: false } });
    expect(claim.entries.map((x) => x.id)).toEqual([a, b, d, e]);
    // h's lease was taken over (its holder replaced as if T.'s lease had ended and U. took the key).
    const hValue = await admin.hgetBuffer(leaseKey(), 'h');
    await admin.hset(leaseKey(), 'h', Buffer.from(hValue!.toString('latin1').replace('T.', 'U.'), 'latin1'));
    const entry = (id: string) => claim.entries.find((x) => x.id === id)!;
    const leases = { token: 'T.', limit: 1, strict: false, keys: [{ key: 'k', ids: [a, b], queued: [] }, { key: 'j', ids: [d], queued: [] }, { key: 'h', ids: [e], queued: [] }] };
    const call = settleCall(c, [a, b, d, e].map((id) => ({ entry: entry(id), verdict: Verdicts.ack() })), leases)!;
    const args = call.args.map(String);
    expect(args.slice(2, 7)).toEqual(['4', d, e, a, b]);
    expect(args.slice(7)).toEqual(['0', '2', 'T.', '1', '0', '0', '', '0', '2', 'j\nh\n', 'k', '-2']);
    expect((await exchange(port, c, { settles: [call] })).settled[0]).toMatchObject({ acked: 4, leaseLost: 1 });
    // j and k are free; h stays with its holder (the fence).
    expect((await admin.hkeys(leaseKey())).sort()).toEqual(['', 'h']);
    expect((await admin.hgetBuffer(leaseKey(), 'h'))!.toString('latin1')).toContain('U.');
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });

  it.each([
    { form: 'one argument per key, with a non-ASCII key freed', odd: 'ключ-550', section: ['', '600'] },
    { form: 'one argument per key, with a key holding a newline freed', odd: 'key\n550', section: ['', '600'] },
    { form: 'the keys packed in one argument', odd: 'key-550', section: ['', '0', '600'] },
  ])('returns 600 one-id keys in one settle (past one HMGET chunk), $form: a key with an entry waiting falls back, frees its slot and goes ready', async ({ odd, section }) => {
    const c = config('c', { maxRoundBytes: 1024 * 1024 });
    const keys = Array.from({ length: 600 }, (_, i) => (i === 550 ? odd : `key-${i}`));
    const ids: string[] = [];
    for (const [i, key] of keys.entries()) ids.push(await append(admin, stream, { event_id: `e${i}`, payload: 'x', flow_key: key }));
    const plan = { token: 'T.', leaseMs: 5_000, limit: 1, strict: false };
    const claimed = [];
    for (let round = 0; round < 3; round += 1) claimed.push(...(await claimOnce(port, c, { fresh: 200, reclaim: 0, flow: plan })).entries);
    expect(claimed.map((entry) => entry.id)).toEqual(ids);
    // Another run's entry of key-520 waits behind this run's holder.
    const waiting = await append(admin, stream, { event_id: 'w', payload: 'x', flow_key: 'key-520' });
    expect(await claimOnce(port, config('d'), { fresh: 1, reclaim: 0, flow: { ...plan, token: 'U.' } })).toMatchObject({ entries: [], flowParked: 1 });
    const leases = { token: 'T.', limit: 1, strict: false, keys: keys.map((key, i) => ({ key: /[^\x00-\x7f]/.test(key) ? new TextEncoder().encode(key) : key, ids: [ids[i]!], queued: [] })) };
    const call = settleCall(c, claimed.map((entry) => ({ entry, verdict: Verdicts.ack() })), leases)!;
    // One section: '', 600, then the keys (or '', 0, 600, then the keys in one argument).
    const flow = call.args.slice(3 + 600 + 1).map(String);
    expect(flow.slice(0, 5 + section.length)).toEqual(['1', 'T.', '1', '0', '0', ...section]);
    expect(flow.length).toBe(5 + section.length + (section.length === 2 ? 600 : 1));
    expect((await exchange(port, c, { settles: [call] })).settled[0]).toMatchObject({ acked: 600, leaseLost: 0, readyKeys: 1 });
    // Only key-520 keeps a field (its waiting entry), held by no one; it is the one ready key.
    expect((await admin.hkeys(leaseKey())).sort()).toEqual(['', 'key-520']);
    expect(await admin.zrange(flowReadyKey(leaseKey()), 0, -1)).toEqual(['key-520']);
    expect((await pendingRows(admin, stream, 'g')).map((row) => row.id)).toEqual([waiting]);
  });

  it.each([
    ['a section of one-id keys with more keys than the ack list holds ids', ['', 2, 'k', 'j'], /malformed section of one-id flow keys/],
    ['a packed section of one-id keys with more keys than the ack list holds ids', ['', 0, 2, 'k\nj\n'], /malformed section of one-id flow keys/],
    ['a packed section holding more keys than its count', ['', 0, 1, 'k\nj\n'], /malformed section of one-id flow keys/],
    ['a packed section whose last key has no newline', ['', 0, 1, 'k'], /malformed section of one-id flow keys/],
    ['a packed section without its keys', ['', 0, 1], /malformed section of one-id flow keys/],
    ['a packed section with bytes after its last newline', ['', 0, 1, 'k\nj'], /malformed section of one-id flow keys/],
    ['a packed section naming the empty key', ['', 0, 1, '\n'], /malformed section of one-id flow keys/],
    ['a section of one-id keys naming the empty key', ['', 1, ''], /malformed section of one-id flow keys/],
    ['a flow section that takes more acked ids than the ack list holds', ['k', -2], /flow section takes more acked ids/],
  ])('refuses %s before it writes anything: nothing acked, the lease left to its end', async (_, section, message) => {
    const c = config('c');
    const a = await append(admin, stream, { event_id: 'a', payload: 'k:0', flow_key: 'k' });
    await claimOnce(port, c, { fresh: 1, reclaim: 0, flow: { token: 'T.', leaseMs: 5_000, limit: 1, strict: false } });
    const keys = [c.keys.stream, c.keys.dlt, c.keys.defer, c.keys.flowLease, flowReadyKey(c.keys.flowLease), flowQueueKey(c.keys.flowLease)];
    const reply = await port.exchange([command('EVAL', settleScript.text, keys.length, ...keys, 'g', 60, 1, a, 0, 1, 'T.', 1, 0, 0, ...section)]);
    expect(reply[0]).toBeInstanceOf(RedisCommandError);
    expect(String((reply[0] as RedisCommandError).message)).toMatch(message);
    expect(await admin.hexists(leaseKey(), 'k')).toBe(1);
    expect((await pendingRows(admin, stream, 'g')).map((row) => row.id)).toEqual([a]);
  });

  it('sends a decided round\'s settle at once over TCP, with the claim after next, behind the claim beside the round; every round is reported in order with its acks', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    await appendKeyed(keys, 6);
    const metered = meterPort(port);
    const rounds: RoundReport[] = [];
    const poller = createPoller({ port: metered, config: config('c'), process: createProcessor(rawPayload, () => 'committed') });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report).toMatchObject({ acked: 60, handled: 60, flowLeaseLost: 0, flowParked: 0 });
    expect(rounds.map((r) => r.acked)).toEqual(rounds.map((r) => r.handled));
    // Steady rounds (a claim beside each) cost one round trip: over TCP the settle goes out as
    // soon as its round is decided, with the claim beside the next round (Redis returns the
    // leases while the claim beside this round is landed); over REST settle and claim share
    // the request sent when the next round starts.
    const steady = rounds.slice(2).filter((r) => r.handled === 10).map((r) => r.roundTrips);
    expect(steady.length).toBeGreaterThan(0);
    expect(new Set(steady)).toEqual(new Set([1]));
    expect(await admin.exists(leaseKey())).toBe(0);
  });

  it('handles the next round while the settle of the round before is still unanswered: Node does not wait for the lease work first', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    await appendKeyed(keys, 6);
    // Every exchange that leads with a settle.lua call is answered 150 ms late.
    const settleSha = settleScript.sha1;
    const unanswered = new Set<number>();
    let nextSettle = 0;
    const slowSettles: RedisPort = {
      transport: port.transport,
      cluster: port.cluster,
      close: async () => {},
      exchange: async (commands) => {
        if (commands[0]?.args[0] !== settleSha) return port.exchange(commands);
        const settle = (nextSettle += 1);
        unanswered.add(settle);
        const replies = await port.exchange(commands);
        await sleepMs(150);
        unanswered.delete(settle);
        return replies;
      },
    };
    let startedBesideASettle = 0;
    const poller = createPoller({
      port: slowSettles,
      config: config('c'),
      process: createProcessor(rawPayload, () => {
        if (unanswered.size > 0) startedBesideASettle += 1;
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ acked: 60, handled: 60, flowLeaseLost: 0 });
    // Settles went out in either case; the rounds after round 2 are handled beside one still
    // out (over REST too: it sends the settle with the next claim as that round starts).
    expect(nextSettle).toBeGreaterThan(0);
    expect(startedBesideASettle).toBeGreaterThanOrEqual(10);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
    expect(await admin.exists(leaseKey())).toBe(0);
  });

  it('carries a round whose settle, sent early, failed to the final settle: committed entries acked, the batches claimed ahead released with their leases', async () => {
    const keyed = await appendKeyed(Array.from({ length: 30 }, (_, i) => `k${i}`), 1);
    const ids = [...keyed.values()];
    const keyOf = new Map([...keyed].map(([name, id]) => [id, name.split(':')[0]!]));
    // The DLT key holds a string: the settle of a round with a dead-letter fails (WRONGTYPE).
    await admin.set(config('c').keys.dlt, 'not a stream');
    const poller = createPoller({
      port,
      config: config('c', { batch: 5, minIdleMs: 10_000 }),
      process: createProcessor(rawPayload, ({ payload }) => {
        if (decodeText(payload) === 'k6:0') throw new Rejection('bad_input');
        return 'committed' as const;
      }),
    });
    await expect(poller.run({ mode: 'drain' })).rejects.toThrow(/settle/);
    const rows = await pendingRows(admin, stream, 'g');
    // Acks go first in a settle: every handled entry but the rejected one is acked.
    const handled = rows.filter((row) => row.deliveries > 0).map((row) => row.id);
    expect(handled).toEqual([ids[6]]);
    // Whatever was claimed and never started went back: no delivery counted, due at once, its
    // key's lease given back (the failed settle's keys stay leased until the run's deadline).
    // Over TCP two batches were claimed ahead at the stop (k15-k19, and k20-k24 claimed with the
    // settle sent early for the round after the failing one), over REST one.
    const unstarted = rows.filter((r) => r.deliveries === 0);
    expect(unstarted.map((row) => row.id)).toEqual(ids.slice(15, port.transport === 'tcp' ? 25 : 20));
    for (const row of unstarted) expect(row.idleMs).toBeGreaterThanOrEqual(10_000);
    for (const row of unstarted) expect(await admin.hexists(leaseKey(), keyOf.get(row.id)!)).toBe(0);
  });

  it('keeps the slot of a handler that timed out (it may still run) until the lease ends', async () => {
    await appendKeyed(['k'], 2);
    const timedOut = createPoller({
      port,
      config: config('slow', { handlerTimeoutMs: 100, batch: 1 }),
      process: createProcessor(rawPayload, async () => {
        await sleepMs(300);
        return 'committed' as const;
      }),
    });
    const slow = await timedOut.run({ mode: 'drain', maxRounds: 1 });
    expect(slow.retained).toBe(1);
    expect(await admin.hexists(leaseKey(), 'k')).toBe(1);
    const other = await createPoller({ port, config: config('other'), process: createProcessor(rawPayload, () => 'committed') }).run({ mode: 'drain' });
    expect(other.handled).toBe(0);
    expect(other.flowParked).toBe(1);
  });

  it('refuses an ordering key beside flow: the flow key orders a run\'s entries', () => {
    expect(() => createPoller({ port, config: config('c'), process: createProcessor(rawPayload, () => 'committed'), orderingKey: () => 'x' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', problems: [expect.objectContaining({ path: 'orderingKey' })] }),
    );
  });

  it('costs an idle run one command with flow on, and touches no flow key with it off', async () => {
    const metered = meterPort(port);
    const idle = await createPoller({ port: metered, config: config('c'), process: createProcessor(rawPayload, () => 'committed') }).run({ mode: 'drain' });
    expect(idle.roundTrips).toBe(1);

    await appendKeyed(['k'], 3);
    const off = parseConsumerConfig(fastConfig(stream, { consumer: 'off' }));
    const report = await createPoller({ port, config: off, process: createProcessor(rawPayload, () => 'committed') }).run({ mode: 'drain' });
    expect(report.acked).toBe(3);
    expect(await admin.exists(leaseKey())).toBe(0);
  });
});
