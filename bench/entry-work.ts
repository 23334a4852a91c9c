/**
 * `npx tsx bench/entry-work.ts <mode> [entries] [batch] [reps]`: the Node work per entry of
 * a drained stream, without Redis (issue 15 item 4), so it is deterministic enough for
 * `node --cpu-prof` and for instruction counts under `valgrind --tool=callgrind`.
 *
 * `product`: what a run does with each round's replies — decode the claim reply
 * (claimOutcome of a native claim), decide the round (signed processor on the native engine, no-op committed
 * handler, the same as bench/scenarios/processor.ts), build the settle call and the round
 * report. `raw_verify`: what the raw_verify scenario does per entry (field map, textbook
 * canonical message, createHmac + timingSafeEqual, the id kept for XACK). `none`: builds the
 * entries and stops, the baseline that instruction counts subtract.
 *
 * The replies are XREADGROUP replies of signed 300 B entries (bench/fixtures.ts), one per
 * round, built as Buffers as ioredis hands them over. Prints µs per entry (wall clock of the
 * measured loop, after a warm-up pass); for instruction counts, compare two entry counts
 * and divide the difference.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { claimOutcome, type ClaimPlan } from '../src/consume/claim';
import { parseConsumerConfig } from '../src/consume/config';
import { addRound, EMPTY_RUN } from '../src/consume/report';
import { decideRound, orderingKeys, roundReport, type RoundDeps } from '../src/consume/round';
import { RunMemory } from '../src/consume/run-memory';
import { NOTHING_SETTLED, settleCall } from '../src/consume/settle';
import type { RedisPort, RedisReply } from '../src/redis/port';
import { jsonPayload, signedFields } from './fixtures';
import { verifyTextbook } from './scenarios/raw-verify';

const STREAM = 'bench:300B';
const mode = process.argv[2] ?? 'product';
const entries = Number(process.argv[3] ?? 20_000);
const batch = Number(process.argv[4] ?? 100);
const reps = Number(process.argv[5] ?? 3);

/** The XREADGROUP replies of a drain of `count` entries, `batch` per round. */
async function buildReplies(count: number): Promise<RedisReply[]> {
  const payload = jsonPayload(300);
  const replies: RedisReply[] = [];
  let ms = 1_764_500_000_000;
  for (let start = 0; start < count; start += batch) {
    const list: RedisReply[] = [];
    for (let i = start; i < Math.min(count, start + batch); i += 1) {
      const fields = await signedFields(STREAM, `ev-${i}`, payload);
      list.push([Buffer.from(`${ms}-${i % 7}`), fields.map((f) => Buffer.from(f))]);
      if (i % 7 === 6) ms += 1;
    }
    replies.push([[Buffer.from(STREAM), list]]);
  }
  return replies;
}

const noPort: RedisPort = {
  transport: 'tcp',
  cluster: false,
  exchange: () => Promise.reject(new Error('no Redis in this benchmark')),
  close: async () => {},
};

async function productPass(replies: readonly RedisReply[], deps: RoundDeps): Promise<number> {
  const plan: ClaimPlan = { fresh: batch, reclaim: 0, allowance: 4 << 20, alone: false, read: 'native', gate: 'g' };
  const held = new Set<string>();
  const deadline = Date.now() + 600_000;
  // A native claim's replies: MULTI, three QUEUED, and EXEC with claim.lua's answer (it let the read through) and the read's.
  const ok = Buffer.from('OK');
  const queued = Buffer.from('QUEUED');
  const script: RedisReply = [Buffer.from(''), [], [], [], Buffer.from(''), Buffer.from('native'), [], 0, 0];
  let total = EMPTY_RUN;
  for (const reply of replies) {
    const outcome = claimOutcome(plan, [ok, queued, queued, queued, [script, reply, 1]]);
    if (!('claim' in outcome)) throw outcome.error;
    const { claim } = outcome;
    const decided = await decideRound(deps, claim.entries, orderingKeys(deps, claim.entries), deadline, held, () => false);
    const settle = settleCall(deps.config, decided.decisions);
    if (settle === undefined) throw new Error('nothing to settle');
    total = addRound(total, roundReport(decided, NOTHING_SETTLED, claim, 1, 0));
  }
  if (total.handled !== entries || total.retained !== 0 || total.deadLettered !== 0) throw new Error(`product pass: ${JSON.stringify(total)}`);
  return total.handled;
}

async function rawVerifyPass(replies: readonly RedisReply[]): Promise<number> {
  const stream = Buffer.from(STREAM);
  let acked = 0;
  for (const reply of replies) {
    // An await per round, as the raw loop has one per round trip.
    await Promise.resolve();
    const ids: Buffer[] = [];
    for (const [id, values] of (reply as [[Buffer, Array<[Buffer, Buffer[]]>]])[0][1]) {
      if (!verifyTextbook(stream, values)) throw new Error(`raw_verify: ${id.toString()} failed`);
      ids.push(id);
    }
    acked += ids.length;
  }
  return acked;
}

async function main(): Promise<void> {
  const replies = await buildReplies(entries);
  if (mode === 'none') return;
  // Imported here so that `none` pays for none of it.
  const { benchProcessor } = await import('./scenarios/processor');
  const config = parseConsumerConfig({ stream: STREAM, group: 'bench', consumer: 'bench-product', batch, handlerTimeoutMs: 5_000, runBudgetMs: 600_000, minIdleMs: 1_200_000 });
  const deps: RoundDeps = { port: noPort, config, process: benchProcessor(STREAM), now: Date.now, memory: new RunMemory() };
  const pass = mode === 'raw_verify' ? () => rawVerifyPass(replies) : () => productPass(replies, deps);
  // ENTRY_WORK_PROFILE=<file>: a CPU profile of the measured passes only, not of building the entries.
  const profileTo = process.env.ENTRY_WORK_PROFILE;
  const session = profileTo === undefined ? undefined : new Session();
  // ENTRY_WORK_HEAP=<file>: a sampling heap profile (allocations by function) instead.
  const heapTo = process.env.ENTRY_WORK_HEAP;
  const heap = heapTo === undefined ? undefined : new Session();
  if (session !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  if (heap !== undefined) {
    heap.connect();
    await heap.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  for (let rep = 0; rep < reps; rep += 1) {
    const started = performance.now();
    const done = await pass();
    const micros = ((performance.now() - started) * 1000) / done;
    if (process.env.ENTRY_WORK_QUIET !== '1') console.log(`${mode} b${batch}: ${micros.toFixed(2)} µs/entry (rep ${rep + 1})`);
  }
  if (heap !== undefined) {
    const { profile } = await heap.post('HeapProfiler.stopSampling');
    writeFileSync(heapTo!, JSON.stringify(profile));
    heap.disconnect();
  }
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileTo!, JSON.stringify(profile));
    session.disconnect();
  }
}

await main();
