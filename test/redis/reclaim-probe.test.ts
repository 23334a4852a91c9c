/**
 * The every-K reclaim is a probe (SPEC §5.1 "Reclaim cadence", issue 15): while fresh reads
 * fill the rounds it asks XAUTOCLAIM for reclaimBatch / 10 entries, so it scans at most
 * reclaimBatch PEL entries instead of rescanning every batch in flight. It must still not
 * starve the PEL: the shared cursor pages the probes through the busy entries to the idle one
 * behind them, and the claim after the probe that found it reclaims in full. Checked against
 * Redis itself.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { claimScript } from '../../src/generated/lua-scripts';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import type { RedisPort, RedisReply } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows, scriptArg } from '../support/redis';

const MIN_IDLE = 10_000;

interface ClaimCall {
  readonly count: number;
  readonly reclaimedIds: string[];
}

/** Replies carry ids as strings or bytes, depending on the client. */
const text = (value: RedisReply | undefined): string => (value instanceof Uint8Array ? Buffer.from(value).toString() : String(value));

/**
 * A port that records, per claim.lua call that reclaimed, its reclaim count (ARGV[4]) and the
 * ids it reclaimed. A claim inside MULTI answers in
 * the EXEC reply, at its place in the transaction.
 */
function spyOnClaims(port: RedisPort, calls: ClaimCall[]): RedisPort {
  return {
    transport: port.transport,
    cluster: port.cluster,
    async exchange(commands) {
      const replies = await port.exchange(commands);
      let multiAt = -1;
      commands.forEach((c, i) => {
        if (c.name === 'MULTI') multiAt = i;
        if (c.name === 'EXEC') multiAt = -1;
        const count = Number(scriptArg(c, 4));
        // An EVALSHA answered NOSCRIPT is sent again as EVAL: count the call that ran.
        if ((c.args[0] !== claimScript.sha1 && c.args[0] !== claimScript.text) || count === 0) return;
        let reply = replies[i];
        if (multiAt >= 0) {
          const execAt = commands.findIndex((other, j) => j > i && other.name === 'EXEC');
          reply = (replies[execAt] as RedisReply[])[i - multiAt - 1];
        }
        if (reply instanceof Error) return;
        const entries = ((reply as RedisReply[])[1] ?? []) as RedisReply[][];
        calls.push({ count, reclaimedIds: entries.map((e) => text(e[0])) });
      });
      return replies;
    },
    close: () => port.close(),
  };
}

describe.each(clientKinds)('reclaim probes over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const appendPayloads = async (count: number, prefix: string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await append(admin, stream, { event_id: `${prefix}${i}`, payload: `${prefix}${i}` }));
    return ids;
  };

  it('pages the probes through busy PEL entries to an idle one, then reclaims in full', async () => {
    // 45 entries another live consumer is handling (not idle), then one whose consumer died.
    await appendPayloads(45, 'b');
    await admin.xreadgroup('GROUP', 'g', 'busy', 'COUNT', 45, 'STREAMS', stream, '>');
    const [staleId] = await appendPayloads(1, 's');
    await admin.xreadgroup('GROUP', 'g', 'gone', 'COUNT', 1, 'STREAMS', stream, '>');
    await appendPayloads(200, 'p');
    const calls: ClaimCall[] = [];
    const seen: string[] = [];
    const poller = createPoller({
      port: spyOnClaims(port, calls),
      // reclaimBatch 10: a full reclaim asks for 10 (scans up to 100), a probe for 1 (scans up to 10).
      config: fastConfig(stream, { batch: 10, reclaimEveryRounds: 2, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen, async (payload) => {
        // After the run's first (full) reclaim, the dead consumer's entry becomes reclaimable.
        if (payload === 'p3') await admin.xclaim(stream, 'g', 'gone', 0, staleId!, 'IDLE', 60_000);
        return 'committed' as const;
      }),
    });
    const report = await poller.run({ mode: 'drain' });

    expect(report.acked).toBe(201);
    expect(seen).toContain('s0');
    const found = calls.findIndex((call) => call.reclaimedIds.includes(staleId!));
    // The first claim reclaims in full; then each probe scans 10 of the 46 pending entries from
    // the cursor, so the fifth probe reaches b40-b44 and the stale entry behind them.
    expect(calls.slice(0, found + 1).map((call) => call.count)).toEqual([10, 1, 1, 1, 1, 1]);
    expect(calls[found + 1]?.count).toBe(10);
    // The busy entries were scanned, never taken.
    const rows = await pendingRows(admin, stream, 'g');
    expect(rows).toHaveLength(45);
    for (const row of rows) expect(row).toMatchObject({ consumer: 'busy', deliveries: 1 });
  });

  it('reclaims even when the byte budget limits every claim to one entry', async () => {
    // 40 KiB entries under the smallest budget (64 KiB): every claim takes one entry (the
    // first alone; a claim beside a batch in hand has 24 KiB left, which fits none). A reclaim
    // that only took "half the limit" took none, and the dead consumer's entry stayed pending
    // for good.
    const big = (tag: string) => `${tag}:${'x'.repeat(40 * 1024)}`;
    const staleId = await append(admin, stream, { event_id: 'stale', payload: big('stale') });
    await admin.xreadgroup('GROUP', 'g', 'gone', 'COUNT', 1, 'STREAMS', stream, '>');
    await admin.xclaim(stream, 'g', 'gone', 0, staleId, 'IDLE', 60_000);
    for (let i = 0; i < 3; i += 1) await append(admin, stream, { event_id: `f${i}`, payload: big(`f${i}`) });
    const calls: ClaimCall[] = [];
    const seen: string[] = [];
    const poller = createPoller({
      port: spyOnClaims(port, calls),
      config: fastConfig(stream, { batch: 10, maxRoundBytes: 64 * 1024, minIdleMs: MIN_IDLE }),
      process: recordingProcessor(seen),
    });
    const report = await poller.run({ mode: 'drain' });

    expect(seen.map((payload) => payload.split(':')[0]).sort()).toEqual(['f0', 'f1', 'f2', 'stale']);
    expect(report).toMatchObject({ acked: 4, stoppedForDeadline: false });
    expect(calls.some((call) => call.reclaimedIds.includes(staleId))).toBe(true);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });
});
