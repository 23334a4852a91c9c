/**
 * Overlapped rounds (SPEC §5.1, issue 15): a steady round costs one round trip on every
 * client; a run stopped mid-overlap leaves nothing it did not start pending under its
 * consumer with idle < minIdle; ordering keys hold across rounds; nothing is acked that was
 * not committed; the byte budget bounds claim counts; the reclaim cadence skips XAUTOCLAIM
 * on full rounds without starving the PEL. Checked against Redis itself.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { claimScript, releaseScript, settleScript } from '../../src/generated/lua-scripts';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import type { RoundReport } from '../../src/consume/report';
import { Rejection } from '../../src/verdict/verdict';
import { runReportOf } from '../../src/consume/run';
import { clientKinds, ioredisKind } from '../support/clients';
import { fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingIds, pendingRows, scriptArg } from '../support/redis';

const MIN_IDLE = 10_000;

describe.each(clientKinds)('overlapped rounds over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const appendPayloads = async (count: number, prefix = 'p') => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `${prefix}${i}` }));
    return ids;
  };

  /** Loads the run's scripts into the server's cache, so no NOSCRIPT fallback is counted. */
  const warmScripts = async () => {
    for (const script of [claimScript, settleScript, releaseScript]) await admin.script('LOAD', script.text);
  };

  it('costs one round trip per steady round', async () => {
    await warmScripts();
    await appendPayloads(50);
    const metered = meterPort(port);
    const rounds: RoundReport[] = [];
    const poller = createPoller({ port: metered, config: fastConfig(stream, { batch: 10 }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report.acked).toBe(50);
    // Round 1 pays for the run's first claim and, with no handling time known yet, settles
    // and claims after it; from round 2 on the next claim goes out beside the handling (round
    // 2's has nothing to settle yet), and each later round trip settles one round and claims
    // the one after the next.
    expect(rounds.slice(0, 5).map((r) => [r.handled, r.roundTrips])).toEqual([
      [10, 2],
      [10, 2],
      [10, 1],
      [10, 1],
      [10, 1],
    ]);
    expect(report.roundTrips).toBe(metered.roundTrips);
    expect(rounds.reduce((sum, r) => sum + r.roundTrips, 0)).toBe(metered.roundTrips);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it.each(['deadline', 'abort'] as const)('leaves nothing unstarted held under its consumer when stopped mid-overlap (%s)', async (how) => {
    const ids = await appendPayloads(30);
    const seen: string[] = [];
    const stop = new AbortController();
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 5, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen, async (payload) => {
        if (how === 'abort' && payload === 'p7') stop.abort();
        if (how === 'deadline') await sleepMs(30);
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain', deadline: how === 'deadline' ? Date.now() + 400 : undefined, signal: stop.signal });
    expect(report.rounds).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThan(30);
    const rows = await pendingRows(admin, stream, 'g');
    for (const row of rows) {
      const payload = `p${ids.indexOf(row.id)}`;
      if (seen.includes(payload)) continue; // handed to a handler (cut by the deadline): retained as usual
      expect(row.idleMs).toBeGreaterThanOrEqual(MIN_IDLE);
      expect(row.deliveries).toBe(0);
    }
    const unseenPending = rows.filter((r) => !seen.includes(`p${ids.indexOf(r.id)}`));
    expect(report.released).toBe(unseenPending.length);
    if (how === 'abort') {
      expect(seen).toEqual(ids.slice(0, 8).map((_, i) => `p${i}`));
      // p8, p9 of the round being handled, and p10-p14, the batch claimed beside it.
      expect(unseenPending.map((r) => r.id)).toEqual(ids.slice(8, 15));
    }
  });

  it('releases every batch claimed ahead when the settle beside it fails, and still settles and reports every round handled', async () => {
    const ids = await appendPayloads(30);
    // The DLT key holds a string: the settle of a round with a dead-letter fails (WRONGTYPE).
    await admin.set(`${stream}:dlt`, 'not a stream');
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 5, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'p6' || payload === 'p11') throw new Rejection('bad_input');
        return 'committed';
      }),
    });
    // Round 1 (p0-p4) settles alone; round 2 (p5-p9) is handled beside the claim of p10-p14.
    // Over TCP round 2's settle goes out as soon as it is decided, with the claim of p15-p19,
    // and round 3 (p10-p14) is handled beside it; round 3's settle goes out with the claim of
    // p20-p24 before round 2's failure is landed: two settles failed and two batches claimed
    // ahead at the stop. Over REST round 3 is handled beside round 2's settle and the claim of
    // p15-p19, and only round 2's settle fails.
    const failure = await poller.run({ mode: 'drain' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/settle/);
    // Every round handled is settled again by the stop path and reported: none is dropped.
    expect(runReportOf(failure)).toMatchObject({ handled: seen.length });
    expect(seen.length).toBe(15);
    const rows = await pendingRows(admin, stream, 'g');
    const byId = new Map(rows.map((row) => [row.id, row]));
    // Acks go first in a settle, so a settle that failed at its dead-letter acked the rest.
    expect(rows.map((row) => row.id).filter((id) => ids.indexOf(id) < 15)).toEqual([ids[6], ids[11]]);
    // The batches claimed ahead were never started: released, and nothing past them was claimed.
    const ahead = ids.slice(15, port.transport === 'tcp' ? 25 : 20);
    expect(rows.map((row) => row.id).filter((id) => ids.indexOf(id) >= 15)).toEqual(ahead);
    for (const id of ahead) expect(byId.get(id)).toMatchObject({ deliveries: 0 });
    for (const id of ahead) expect(byId.get(id)!.idleMs).toBeGreaterThanOrEqual(MIN_IDLE);
  });

  it('sends a decided round\'s settle with the claim after next while the claim beside the round is still out (TCP only)', async () => {
    await warmScripts();
    await appendPayloads(60);
    // Exchanges in flight at once, as the run's port sees them, and those sent while another was out.
    let inFlight = 0;
    let mostInFlight = 0;
    const sentBehind: Array<readonly { name: string; args: readonly unknown[] }[]> = [];
    const counting: RedisPort = {
      ...port,
      transport: port.transport,
      exchange: async (commands) => {
        mostInFlight = Math.max(mostInFlight, (inFlight += 1));
        if (inFlight > 1) sentBehind.push(commands);
        try {
          return await port.exchange(commands);
        } finally {
          inFlight -= 1;
        }
      },
    };
    const rounds: RoundReport[] = [];
    const poller = createPoller({ port: counting, config: fastConfig(stream, { batch: 10 }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report.acked).toBe(60);
    expect(rounds.map((r) => r.acked)).toEqual(rounds.map((r) => r.handled));
    // REST keeps one request at a time: two HTTP requests need not arrive in order.
    expect(mostInFlight).toBe(port.transport === 'tcp' ? 2 : 1);
    // Over TCP what goes out behind the exchange still out is a round's settle, then a claim.
    if (port.transport === 'tcp') expect(sentBehind.length).toBeGreaterThanOrEqual(3);
    for (const commands of sentBehind) {
      expect(commands[0]?.args[0]).toBe(settleScript.sha1);
      expect(commands.slice(1).some((c) => c.name === 'MULTI' || c.args[0] === claimScript.sha1)).toBe(true);
    }
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('an orderingKey that throws keeps only its own entry pending: the rest of its round is handled and settled', async () => {
    const ids = await appendPayloads(20);
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 5, minIdleMs: MIN_IDLE }),
      orderingKey: (entry) => {
        const payload = new TextDecoder().decode(entry.fields.get('payload')!);
        if (payload === 'p7') throw new TypeError('no key for p7');
        return undefined;
      },
      process: recordingProcessor(seen),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ acked: 19, retained: 1, handlerContractErrors: 1, held: 1 });
    expect(seen).not.toContain('p7');
    // p7 might be behind a held key (its own is unknown): never started, never released early,
    // put back as it was (idle since the claim, no delivery counted for it).
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows.map((row) => row.id)).toEqual([ids[7]]);
    expect(rows[0]).toMatchObject({ consumer: 'c1', deliveries: 0 });
    expect(rows[0]!.idleMs).toBeLessThan(MIN_IDLE);
  });

  it('holds an ordering key across rounds: a retained entry blocks its successors in the next round', async () => {
    for (const payload of ['a0', 'b0', 'a1', 'b1', 'a2', 'b2']) await append(admin, stream, { event_id: payload, payload });
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 2, concurrency: 2 }),
      orderingKey: (entry) => new TextDecoder().decode(entry.fields.get('payload')!).slice(0, 1),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'a0') throw new Error('transient');
        return 'committed';
      }),
    });
    const report = await poller.run({ mode: 'drain' });
    // a1 and a2 are held behind a0. A run keeps at most a batch (2) of held entries: once it
    // holds a1 and a2 it ends, and b2 stays unread in the stream for the next run.
    expect(seen.sort()).toEqual(['a0', 'b0', 'b1']);
    expect(report).toMatchObject({ acked: 2, retained: 3, held: 2 });
    const pending = await pendingRows(admin, stream, 'g');
    expect(pending.length).toBe(3);
    // Held entries stay with this consumer (not released): another run must not overtake a0.
    // Their delivery counts are put back (they never reached a handler).
    for (const row of pending) expect(row.idleMs).toBeLessThan(MIN_IDLE);
    expect(pending.map((row) => row.deliveries)).toEqual([1, 0, 0]);
  });

  it('holds an ordering key across rounds and still handles every other key when the held entries fit a batch', async () => {
    for (const payload of ['a0', 'b0', 'a1', 'b1', 'a2', 'b2']) await append(admin, stream, { event_id: payload, payload });
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 3, concurrency: 2 }),
      orderingKey: (entry) => new TextDecoder().decode(entry.fields.get('payload')!).slice(0, 1),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'a0') throw new Error('transient');
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain' });
    expect(seen.sort()).toEqual(['a0', 'b0', 'b1', 'b2']);
    expect(report).toMatchObject({ acked: 3, retained: 3, held: 2 });
  });

  it('acks exactly what handlers committed', async () => {
    const ids = await appendPayloads(12);
    const outcomes = (payload: string) => {
      const n = Number(payload.slice(1));
      if (n % 3 === 1) return Promise.reject(new Error('db unreachable'));
      if (n % 3 === 2) return new Promise<never>(() => {}); // past its timeout
      return 'committed' as const;
    };
    const poller = createPoller({ port, config: fastConfig(stream, { batch: 4, concurrency: 4, handlerTimeoutMs: 100 }), process: recordingProcessor([], outcomes) });
    const report = await poller.run({ mode: 'drain' });
    expect(report.acked).toBe(4);
    expect(await pendingIds(admin, stream, 'g')).toEqual(ids.filter((_, i) => i % 3 !== 0));
  });

  it('bounds claim counts by the byte budget for 64 KiB entries', async () => {
    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 12; i += 1) await append(admin, stream, { event_id: `b${i}`, payload: big });
    const rounds: RoundReport[] = [];
    const poller = createPoller({ port, config: fastConfig(stream, { batch: 50, maxRoundBytes: 384 * 1024 }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report.acked).toBe(12);
    // A claim takes half the budget, measured by claim.lua, so the claim beside a round has the
    // other half: 192 KiB / (64 KiB + id and field names) = 2.
    expect(rounds[0]!.handled).toBe(2);
    expect(Math.max(...rounds.map((r) => r.handled))).toBe(2);
    // And it goes: once the first rounds are handled, each round's entries came from the claim
    // beside the round before (one round trip a round), not from a claim sent after it (two;
    // with the whole budget a claim's batch left the claim beside it no room).
    const steady = rounds.slice(2).filter((r) => r.handled > 0);
    expect(steady.length).toBeGreaterThanOrEqual(3);
    expect(steady.map((r) => r.roundTrips)).toEqual(steady.map(() => 1));
  });

  it("sizes a large batch's first claim by the stream's entries, with no probe", async () => {
    await appendPayloads(300);
    let probes = 0;
    const spying: RedisPort = {
      transport: port.transport,
      cluster: port.cluster,
      exchange(commands) {
        probes += commands.filter((c) => c.name === 'XREVRANGE').length;
        return port.exchange(commands);
      },
      close: () => port.close(),
    };
    const rounds: RoundReport[] = [];
    const poller = createPoller({ port: spying, config: fastConfig(stream, { batch: 300 }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report.acked).toBe(300);
    // claim.lua measures what it reads: the 300 small entries fit the 4 MiB budget at once.
    expect(rounds[0]!.handled).toBe(300);
    expect(probes).toBe(0);
  });

  it("claims ahead from a run's first round when an earlier run of the process learned the handling time", async () => {
    await appendPayloads(30);
    const pendingAtFirstHandler: number[] = [];
    let first = true;
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 10 }),
      process: recordingProcessor([], async () => {
        if (first) {
          first = false;
          // The claim sent beside this round reaches Redis while this handler runs.
          let pending = 0;
          for (let i = 0; i < 50 && pending <= 10; i += 1) {
            pending = (await pendingRows(admin, stream, 'g')).length;
            if (pending <= 10) await sleepMs(5);
          }
          pendingAtFirstHandler.push(pending);
        }
        return 'committed' as const;
      }),
    });
    await poller.run({ mode: 'drain' });
    await appendPayloads(30, 'q');
    first = true;
    await poller.run({ mode: 'drain' });
    // First run: nothing known, round 1 is handled alone. Second run: batch 2 is claimed beside it.
    expect(pendingAtFirstHandler).toEqual([10, 20]);
  });

  it('drains a short stream in two round trips', async () => {
    await appendPayloads(30);
    const metered = meterPort(port);
    const poller = createPoller({ port: metered, config: fastConfig(`${stream}`, { batch: 100 }), process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain' });
    expect(report.acked).toBe(30);
    // The claim, then settle + the claim that ends the drain.
    expect(metered.roundTrips).toBe(2);
  });

  it.each(['fails', 'outlives its timeout'] as const)(
    'never starts an entry claimed ahead while an earlier entry of its key %s',
    async (how) => {
      for (const payload of ['x0', 'x1', 'a0', 'b0', 'a1', 'b1', 'a2', 'b2']) await append(admin, stream, { event_id: payload, payload });
      const aheadOf = (await admin.xrange(stream, '-', '+')).find(([, fields]) => fields[3] === 'a1')![0];
      const running = new Set<string>();
      const overlaps: string[] = [];
      let a1ClaimedWhileA0Ran = false;
      let releaseA0: () => void = () => {};
      const keyOf = (payload: string) => payload.slice(0, 1);
      const poller = createPoller({
        port,
        config: fastConfig(stream, { batch: 2, concurrency: 2, handlerTimeoutMs: 300, minIdleMs: MIN_IDLE }),
        orderingKey: (entry) => keyOf(new TextDecoder().decode(entry.fields.get('payload')!)),
        process: recordingProcessor([], async (payload) => {
          if ([...running].some((other) => keyOf(other) === keyOf(payload))) overlaps.push(payload);
          running.add(payload);
          try {
            if (payload !== 'a0') return 'committed' as const;
            // Round 2 (a0, b0): the claim of round 3 (a1, b1) goes out beside it.
            for (let i = 0; i < 50 && !a1ClaimedWhileA0Ran; i += 1) {
              const rows = await pendingRows(admin, stream, 'g');
              a1ClaimedWhileA0Ran = rows.some((r) => r.id === aheadOf && r.consumer === 'c1');
              if (!a1ClaimedWhileA0Ran) await sleepMs(5);
            }
            if (how === 'fails') throw new Error('transient');
            await new Promise<void>((resolve) => (releaseA0 = resolve)); // still running after its timeout
            return 'committed' as const;
          } finally {
            running.delete(payload);
          }
        }),
      });
      const report = await poller.run({ mode: 'drain' });
      releaseA0();
      expect(a1ClaimedWhileA0Ran).toBe(true);
      expect(overlaps).toEqual([]);
      // x0 x1 b0 b1 acked; a1 and a2 held behind a0 — a batch (2) of held entries, so the run
      // ends and b2 stays unread.
      expect(report).toMatchObject({ acked: 4, retained: 3, held: 2 });
      // a0 and its successors a1, a2 stay with this consumer, unreleased: no run may overtake
      // a0; the held ones with no delivery counted.
      const pending = await pendingRows(admin, stream, 'g');
      expect(pending.map((row) => [row.consumer, row.deliveries])).toEqual([
        ['c1', 1],
        ['c1', 0],
        ['c1', 0],
      ]);
      for (const row of pending) expect(row.idleMs).toBeLessThan(MIN_IDLE);
    },
  );

  it('skips XAUTOCLAIM on full rounds but reclaims at least every reclaimEveryRounds', async () => {
    const [staleId] = await appendPayloads(1, 's');
    await admin.xreadgroup('GROUP', 'g', 'gone', 'COUNT', 1, 'STREAMS', stream, '>'); // pending, not idle enough yet
    await appendPayloads(40);
    // Claims that reclaimed: claim.lua with a reclaim count (ARGV[4]).
    let reclaims = 0;
    const spying: RedisPort = {
      transport: port.transport,
      cluster: port.cluster,
      exchange(commands) {
        for (const c of commands) if ((c.args[0] === claimScript.sha1 || c.args[0] === claimScript.text) && Number(scriptArg(c, 4)) > 0) reclaims += 1;
        return port.exchange(commands);
      },
      close: () => port.close(),
    };
    const seen: string[] = [];
    let round = 0;
    let staleSeenInRound = -1;
    const poller = createPoller({
      port: spying,
      config: fastConfig(stream, { batch: 5, reclaimEveryRounds: 3, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen, async (payload) => {
        // Mid-run, the stale entry becomes reclaimable (its consumer died long ago).
        if (payload === 'p6') await admin.xclaim(stream, 'g', 'gone', 0, staleId!, 'IDLE', 60_000);
        if (payload === 's0') staleSeenInRound = round;
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain', onRound: () => (round += 1) });
    expect(report.acked).toBe(41);
    // p6 is handled in round 1 (0-based: p0-p4 round 0, p5-p9 round 1); the cadence must reach it within 3 rounds.
    expect(staleSeenInRound).toBeGreaterThan(1);
    expect(staleSeenInRound).toBeLessThanOrEqual(1 + 3);
    expect(reclaims).toBeLessThan(report.rounds);
  });
});

// Native reads (inside MULTI, beside claim.lua) are TCP's; REST reads every entry in claim.lua.
describe('overlapped rounds over ioredis, native reads', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const appendPayloads = async (count: number, prefix = 'p') => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `${prefix}${i}` }));
    return ids;
  };

  it('gives back what the reclaim took when the native read beside it fails', async () => {
    const ids = await appendPayloads(3);
    // Delivered long ago to a consumer that died: reclaimable.
    await admin.xreadgroup('GROUP', 'g', 'dead', 'COUNT', 3, 'STREAMS', stream, '>');
    await admin.xclaim(stream, 'g', 'dead', 0, ...ids, 'IDLE', MIN_IDLE * 2);
    // The native read (inside MULTI, after claim.lua reclaimed) answers an error: it names a
    // group that does not exist. The run's first claim goes through claim.lua alone (no
    // XREADGROUP command) and reclaims one entry (reclaimBatch 1); the second reclaims the
    // next one beside the failing read.
    const failingRead: RedisPort = {
      ...port,
      exchange: (commands) =>
        port.exchange(commands.map((c) => (c.name === 'XREADGROUP' ? { ...c, args: c.args.map((a, i) => (i === 1 ? 'no-such-group' : a)) } : c))),
    };
    const config = fastConfig(stream, { batch: 5, reclaimBatch: 1, reclaimEveryRounds: 1, minIdleMs: MIN_IDLE });
    const poller = createPoller({ port: failingRead, config, process: recordingProcessor([]) });
    const before = new Map((await pendingRows(admin, stream, 'g')).map((row) => [row.id, row.deliveries]));
    await expect(poller.run({ mode: 'drain' })).rejects.toThrow(/NOGROUP/);
    const rows = await pendingRows(admin, stream, 'g');
    // ids[0] was handled and acked; ids[1] was reclaimed to c1, then released unstarted:
    // reclaimable at once, deliveries as before; ids[2] was never claimed.
    expect(rows.map((row) => row.id)).toEqual(ids.slice(1));
    expect(rows[0]).toMatchObject({ consumer: 'c1', deliveries: before.get(ids[1]!) });
    expect(rows[0]!.idleMs).toBeGreaterThanOrEqual(MIN_IDLE);
    expect(rows[1]).toMatchObject({ consumer: 'dead', deliveries: before.get(ids[2]!) });
  });

  it.each([
    ['without flow leases', {}],
    ['with flow leases', { flow: { limit: 1 } }],
  ])('keeps one round trip per steady round through the reclaim probes (%s): the claim after next goes out behind a probe too', async (_, flow) => {
    for (const script of [claimScript, settleScript, releaseScript]) await admin.script('LOAD', script.text);
    for (let i = 0; i < 120; i += 1) await append(admin, stream, { event_id: `p${i}`, payload: `p${i}`, flow_key: `k${i % 40}` });
    // Claims that reclaim (claim.lua with ARGV[4] > 0, not the admit call), and claims sent while
    // one of them was out. Their answers come 30 ms late, so a claim sent before the run landed
    // one is seen as sent behind it however fast Redis answers.
    const isClaim = (c: { args: readonly unknown[] }) => c.args[0] === claimScript.sha1 && scriptArg(c, 8) !== 'admit';
    let probes = 0;
    let probesOut = 0;
    let claimsBehindProbe = 0;
    const metered = meterPort({
      ...port,
      exchange: async (commands) => {
        const reclaims = commands.some((c) => isClaim(c) && Number(scriptArg(c, 4)) > 0);
        if (probesOut > 0 && commands.some(isClaim)) claimsBehindProbe += 1;
        if (!reclaims) return port.exchange(commands);
        probes += 1;
        probesOut += 1;
        try {
          const replies = await port.exchange(commands);
          await sleepMs(30);
          return replies;
        } finally {
          probesOut -= 1;
        }
      },
    });
    const rounds: RoundReport[] = [];
    const config = fastConfig(stream, { batch: 10, reclaimEveryRounds: 3, minIdleMs: MIN_IDLE, ...flow });
    const poller = createPoller({ port: metered, config, process: recordingProcessor([]) });
    const report = await poller.run({ mode: 'drain', onRound: (r) => rounds.push(r) });
    expect(report.acked).toBe(120);
    // The first claim reclaims in full; then a probe every third claim.
    expect(probes).toBeGreaterThanOrEqual(4);
    expect(claimsBehindProbe).toBeGreaterThanOrEqual(2);
    // Rounds 1 and 2 pay for the run's start (see 'costs one round trip per steady round');
    // every later round settles one round and claims the one after next in one round trip,
    // the rounds beside a probe included (a flow run sent their settles on their own before).
    expect(rounds.slice(2, -1).map((r) => r.roundTrips)).toEqual(rounds.slice(2, -1).map(() => 1));
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });
});
