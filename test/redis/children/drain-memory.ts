/**
 * Child of byte-budget.test.ts: drains a stream with a given byte budget and reports the most
 * memory the run held. Run with --expose-gc: a collection after every round makes
 * `arrayBuffers` (the external memory Buffers of replies live in) show what the run still
 * holds, rather than garbage a collector has not reached yet.
 *   argv: <redisUrl> <stream> <maxRoundBytes> <expected entries>
 */
import { createPoller } from '../../../src/consume/poller';
import { connectIoredis } from '../../../src/redis/ioredis-port';
import { createProcessor, rawPayload } from '../../../src/consume/processor';

const [redisUrl, stream, maxRoundBytes, expected] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const port = connectIoredis(redisUrl!);
const baseline = (gc(), process.memoryUsage());
let peakArrayBuffers = 0;
let peakRss = 0;
const sample = () => {
  const now = process.memoryUsage();
  peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers - baseline.arrayBuffers);
  peakRss = Math.max(peakRss, now.rss - baseline.rss);
};
const poller = createPoller({
  port,
  config: { stream: stream!, group: 'g', consumer: 'c1', batch: 100, maxRoundBytes: Number(maxRoundBytes), runBudgetMs: 20_000, minIdleMs: 30_000, handlerTimeoutMs: 5_000 },
  // Sampled while the round's entries are held (handled) and after a collection between
  // rounds — both right after a collection: without one, the handler's sample also counted the
  // previous replies' garbage (chunks and joined buffers), 12.3 or 18.2 MiB by the collector's
  // timing, on Redis and Valkey alike; after one, 12.2-12.3 MiB every time on both.
  process: createProcessor(rawPayload, () => (gc(), sample(), 'committed')),
});
let acked = 0;
for (let run = 0; run < 20 && acked < Number(expected); run += 1) {
  const report = await poller.run({ mode: 'drain', onRound: () => (gc(), sample()) });
  acked += report.acked;
}
await port.close();
console.log(JSON.stringify({ acked, peakArrayBuffers, peakRss }));
if (process.env.DRAIN_MEMORY_VERBOSE) console.error(`peak arrayBuffers ${(peakArrayBuffers / 1048576).toFixed(1)} MiB, rss ${(peakRss / 1048576).toFixed(1)} MiB`);
