/**
 * The byte budget is a bound (SPEC §5.1 "Byte budget", issue 24 item 1): a run never holds
 * claim replies larger than maxRoundBytes in total, except one entry larger than the budget
 * read alone. Sizes a run has not seen (its first claim, a backlog behind small entries, a
 * reclaim) are measured by Redis before they are read, whoever appended them: entries from a
 * writer that records sizes (the product's) are read natively when claim.lua proves they
 * fit, any others through claim.lua, cut to the allowance. Checked on what Redis sends back.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { claimScript } from '../../src/generated/lua-scripts';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller, type Poller } from '../../src/consume/poller';
import type { RedisPort, RedisReply } from '../../src/redis/port';
import { clientKinds, ioredisKind } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, foreignAppend, pendingIds, scriptArg } from '../support/redis';

const MiB = 1024 * 1024;
const CHILD = fileURLToPath(new URL('./children/drain-memory.ts', import.meta.url));

interface ClaimReply {
  /** claim.lua's ARGV: the allowance it was given, and whether the run held nothing else. */
  readonly allowance: number;
  readonly alone: boolean;
  /** Bytes of every string in the exchange's replies (the entries' ids, names and values, and a few words). */
  readonly bytes: number;
  /** Entries in those replies. */
  readonly entries: number;
}

function stringBytes(reply: unknown): number {
  if (reply instanceof Uint8Array) return reply.byteLength;
  if (typeof reply === 'string') return Buffer.byteLength(reply);
  if (Array.isArray(reply)) return reply.reduce((sum: number, item) => sum + stringBytes(item), 0);
  return 0;
}

/** Stream entries (`[id, [field, value, ...]]`) anywhere in a reply. */
function entryCount(reply: unknown): number {
  if (!Array.isArray(reply)) return 0;
  const isEntry = reply.length === 2 && reply[0] instanceof Uint8Array && /^\d+-\d+$/.test(Buffer.from(reply[0]).toString()) && Array.isArray(reply[1]);
  return isEntry ? 1 : reply.reduce((sum: number, item) => sum + entryCount(item), 0);
}

/** A port recording, for every exchange that carried a claim, what the claim was allowed and what came back. */
function spyOnClaimReplies(port: RedisPort, claims: ClaimReply[]): RedisPort {
  return {
    ...port,
    async exchange(commands) {
      const replies = await port.exchange(commands);
      const claim = commands.find((c) => c.args[0] === claimScript.sha1 || c.args[0] === claimScript.text);
      if (claim !== undefined) {
        // EVALSHA sha 5 k1..k5 group consumer minIdle reclaim allowance alone fresh read
        claims.push({ allowance: Number(scriptArg(claim, 5)), alone: String(scriptArg(claim, 6)) === '1', bytes: stringBytes(replies), entries: entryCount(replies as RedisReply[]) });
      }
      return replies;
    },
  };
}

/** Room for the words a claim's reply carries beside its entries (cursor, note, fresh-read mode). */
const REPLY_WORDS = 256;

function expectWithinBudget(claims: readonly ClaimReply[], maxRoundBytes: number, largest: number): void {
  expect(claims.length).toBeGreaterThan(0);
  for (const claim of claims) {
    expect(claim.allowance).toBeLessThanOrEqual(maxRoundBytes);
    // One entry larger than the allowance only alone, and never more than that entry.
    if (claim.bytes > claim.allowance + REPLY_WORDS) {
      expect(claim).toMatchObject({ alone: true, entries: 1 });
      expect(claim.bytes).toBeLessThanOrEqual(largest + REPLY_WORDS);
    }
  }
  // A claim sent beside a batch in hand (not alone) and that batch fit the budget together.
  for (let i = 1; i < claims.length; i += 1) {
    if (!claims[i]!.alone) expect(claims[i - 1]!.bytes + claims[i]!.bytes).toBeLessThanOrEqual(maxRoundBytes + 2 * REPLY_WORDS);
  }
}

/** Runs the poller until it has acked `expected` entries (a loaded machine may need several runs, as a cron would). */
async function drainAll(poller: Poller, expected: number): Promise<{ acked: number; reclaimed: number }> {
  let acked = 0;
  let reclaimed = 0;
  for (let run = 0; run < 30 && acked < expected; run += 1) {
    const report = await poller.run({ mode: 'drain' });
    acked += report.acked;
    reclaimed += report.reclaimed;
  }
  return { acked, reclaimed };
}

describe.each(clientKinds)('the byte budget over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const payload = (bytes: number, tag: string) => `${tag}:${'x'.repeat(Math.max(0, bytes - tag.length - 1))}`;

  it.each([
    ['recorded sizes', append],
    ['a writer that records nothing', foreignAppend],
  ] as const)('never reads 1 MiB entries past a 4 MiB budget, the first claim included (%s)', async (_, write) => {
    // The old first claim probed the newest entry (the small one) and read 120 MiB at once.
    for (let i = 0; i < 12; i += 1) await write(admin, stream, { event_id: `big${i}`, payload: payload(MiB, `big${i}`) });
    await write(admin, stream, { event_id: 'small', payload: 'small' });
    const claims: ClaimReply[] = [];
    const seen: string[] = [];
    const poller = createPoller({ port: spyOnClaimReplies(port, claims), config: fastConfig(stream, { batch: 500, maxRoundBytes: 4 * MiB, runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor(seen) });
    expect((await drainAll(poller, 13)).acked).toBe(13);
    expectWithinBudget(claims, 4 * MiB, MiB + 64);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  }, 60_000);

  it('keeps a claimed-ahead batch within what the batch in hand leaves of the budget: small entries, then large ones', async () => {
    // 300 small entries, then 12 of 640 KiB: the old claim ahead read them all (it read 64 MiB
    // against a 2 MiB share with 100 of them).
    for (let i = 0; i < 300; i += 1) await append(admin, stream, { event_id: `s${i}`, payload: payload(300, `s${i}`) });
    for (let i = 0; i < 12; i += 1) await append(admin, stream, { event_id: `l${i}`, payload: payload(640 * 1024, `l${i}`) });
    const claims: ClaimReply[] = [];
    const poller = createPoller({ port: spyOnClaimReplies(port, claims), config: fastConfig(stream, { runBudgetMs: 9_000, minIdleMs: 20_000 }), process: recordingProcessor([]) });
    expect((await drainAll(poller, 312)).acked).toBe(312);
    expectWithinBudget(claims, 4 * MiB, 640 * 1024 + 64);
  }, 60_000);

  it.each([
    ['recorded sizes', append],
    ['a writer that records nothing', foreignAppend],
  ] as const)('stays within the budget for mixed and growing sizes (%s), reclaims included', async (_, write) => {
    const sizes = [100, 2_000, 12_000, 300, 50_000, 170_000, 10, 380_000, 220_000, 16_000, 750_000, 20];
    for (let round = 0; round < 3; round += 1) {
      for (const [i, size] of sizes.entries()) await write(admin, stream, { event_id: `m${round}-${i}`, payload: payload(size * (round + 1), `m${round}-${i}`) });
    }
    // A third of them delivered long ago to a consumer that died: the run reclaims them too.
    await admin.xreadgroup('GROUP', 'g', 'dead', 'COUNT', 12, 'STREAMS', stream, '>');
    const dead = (await admin.xpending(stream, 'g', '-', '+', 100)) as Array<[string]>;
    await admin.xclaim(stream, 'g', 'dead', 0, ...dead.map(([id]) => id), 'IDLE', 60_000);
    const claims: ClaimReply[] = [];
    const poller = createPoller({
      port: spyOnClaimReplies(port, claims),
      config: fastConfig(stream, { batch: 7, maxRoundBytes: 512 * 1024, runBudgetMs: 9_000, minIdleMs: 20_000 }),
      process: recordingProcessor([]),
    });
    const report = await drainAll(poller, 36);
    expect(report.acked).toBe(36);
    expect(report.reclaimed).toBe(12);
    expectWithinBudget(claims, 512 * 1024, 3 * 750_000 + 64);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  }, 60_000);

});

// Measured in a child over TCP: its memory is the run's own, not a test worker's.
describe('the byte budget in memory (ioredis)', () => {
  let admin: Redis;
  let stream: string;

  useRedisPerTest(ioredisKind, (h) => ({ admin, stream } = h));
  beforeEach(async () => {
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
  });

  it('holds no more than the budget in memory while it drains 120 MiB of 1 MiB entries', async () => {
    for (let i = 0; i < 120; i += 1) await append(admin, stream, { event_id: `big${i}`, payload: 'x'.repeat(MiB) });
    await append(admin, stream, { event_id: 'small', payload: 'small' });
    // In a child with --expose-gc: what the run holds, not what a collector has yet to free.
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, inject('redisUrl'), stream, String(4 * MiB), '121'], { encoding: 'utf8', timeout: 120_000 });
    expect(child.status, child.stderr).toBe(0);
    const { acked, peakArrayBuffers, peakRss } = JSON.parse(child.stdout.trim().split('\n').pop()!) as { acked: number; peakArrayBuffers: number; peakRss: number };
    const figures = `peak arrayBuffers ${(peakArrayBuffers / MiB).toFixed(1)} MiB, RSS +${(peakRss / MiB).toFixed(1)} MiB`;
    expect(acked, figures).toBe(121);
    // The old run read one 120 MiB reply (RSS +144 MiB). Now: the batch in hand and the one
    // claimed beside it, 4 MiB together, plus what the client holds while it parses a reply
    // (its chunks and the joined string: about twice the reply) — measured 6.3–12.2 MiB on a
    // quiet machine and with two CPU-bound processes beside it (20 runs), up to 18.0 MiB while
    // other test files and a benchmark shared the two cores with it (collected before each
    // sample). The bound is the one docs/guarantees.md tells users to plan for: 5 × the budget.
    expect(peakArrayBuffers, figures).toBeLessThan(5 * 4 * MiB);
    expect(peakRss, figures).toBeLessThan(48 * MiB);
  }, 150_000);
});
