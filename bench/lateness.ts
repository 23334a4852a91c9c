/**
 * `npm run bench:lateness [-- --events N --window-ms W --period-ms P]`: how late scheduled events
 * reach their handler (SPEC §5.6, issue 26), against the bound docs/guarantees.md states, and
 * that none is early. Its own redis-server; two streams, each with N events due at times spread
 * over W ms:
 * - `cron`: a poller drained every P ms, on the clock's P boundaries, as a cron trigger runs a
 *   poll function (EventBridge and Cloudflare fire once a minute at best; P = 5 s here scales
 *   that down: the lateness scales with P). Bound: P plus a run's time to reach the event.
 * - `wake-up`: each publish also sets a timer for its due time rounded up to whole seconds, as
 *   an SQS `DelaySeconds` / Queues `delaySeconds` wake-up arrives, and a drain runs when it
 *   fires. Bound: the rounding (< 1 s) plus a run's time.
 * Lateness is measured twice: at the append (the entry id's ms, Redis clock: the move's TIME)
 * and at the handler (this process's clock, the same machine's as the Redis it started).
 * Writes bench/results/lateness.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '../local/redis-server';
import { createPoller } from '../src/consume/poller';
import { createProcessor, rawPayload } from '../src/consume/processor';
import { createPublisher } from '../src/publish/publisher';
import { connectIoredis } from '../src/redis/ioredis-port';

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const EVENTS = arg('events', 200);
const WINDOW_MS = arg('window-ms', 20_000);
const PERIOD_MS = arg('period-ms', 5_000);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Delivery {
  readonly dueMs: number;
  readonly appendedMs: number;
  readonly handledMs: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(deliveries: readonly Delivery[]) {
  const of = (pick: (d: Delivery) => number) => {
    const values = deliveries.map(pick).sort((a, b) => a - b);
    return { p50: percentile(values, 50), p99: percentile(values, 99), max: values.at(-1)!, early: values.filter((v) => v < 0).length };
  };
  return { delivered: deliveries.length, append: of((d) => d.appendedMs - d.dueMs), handler: of((d) => d.handledMs - d.dueMs) };
}

async function main(): Promise<void> {
  const load = loadavg();
  const server = await startRedisServer();
  const port = connectIoredis(server.url);
  try {
    const modes = ['cron', 'wake-up'] as const;
    const results: Record<string, ReturnType<typeof summary>> = {};
    await Promise.all(
      modes.map(async (mode) => {
        const stream = `lateness:{${mode}}`;
        const due = new Map<string, number>();
        const deliveries: Delivery[] = [];
        const publisher = createPublisher({ port, routes: { due: stream }, auth: { mode: 'exclusive-stream', producer: 'bench' } });
        const poller = createPoller({
          port,
          config: { stream, group: 'g', consumer: mode, batch: 100, runBudgetMs: 4_000, minIdleMs: 10_000, handlerTimeoutMs: 1_000 },
          process: createProcessor(rawPayload, ({ eventId, entry }) => {
            const dueMs = due.get(eventId);
            if (dueMs !== undefined) deliveries.push({ dueMs, appendedMs: Number(entry.id.split('-')[0]), handledMs: Date.now() });
            return 'committed';
          }),
        });
        await poller.ensureGroup();
        let running: Promise<unknown> | undefined;
        const drain = () => {
          if (running !== undefined) return running;
          running = poller.run({ mode: 'drain' }).finally(() => (running = undefined));
          return running;
        };
        const startedAt = Date.now();
        for (let i = 0; i < EVENTS; i += 1) {
          const delayMs = Math.round(((i + Math.random()) * WINDOW_MS) / EVENTS) + 500;
          const result = await publisher.publish({ eventType: 'due', eventId: `${mode}-${i}`, payload: String(i) }, { delayMs });
          due.set(result.eventId, result.scheduled!.deliverAtMs);
          if (mode === 'wake-up') {
            // A platform delay in whole seconds, rounded up: it never arrives before the due time.
            const wakeInMs = Math.ceil((result.scheduled!.dueInMs ?? 0) / 1_000) * 1_000;
            setTimeout(() => void drain(), wakeInMs);
          }
        }
        const until = startedAt + WINDOW_MS + 2 * PERIOD_MS;
        if (mode === 'cron') {
          while (Date.now() < until && deliveries.length < EVENTS) {
            await sleep(PERIOD_MS - (Date.now() % PERIOD_MS));
            await drain();
          }
        } else {
          while (Date.now() < until && deliveries.length < EVENTS) await sleep(200);
        }
        await running;
        results[mode] = summary(deliveries);
      }),
    );
    const report = { when: new Date().toISOString(), events: EVENTS, windowMs: WINDOW_MS, periodMs: PERIOD_MS, loadAverage: load.map((l) => Number(l.toFixed(2))), results };
    mkdirSync(join(here, 'results'), { recursive: true });
    writeFileSync(join(here, 'results', 'lateness.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`lateness of ${EVENTS} scheduled events over ${WINDOW_MS} ms (load ${report.loadAverage.join(' ')}), ms after the due time:`);
    console.log('mode      delivered  append p50/p99/max   handler p50/p99/max   early');
    for (const mode of modes) {
      const r = results[mode]!;
      const triple = (s: { p50: number; p99: number; max: number }) => `${s.p50}/${s.p99}/${s.max}`.padEnd(21);
      console.log(`${mode.padEnd(9)} ${String(r.delivered).padEnd(10)} ${triple(r.append)} ${triple(r.handler)} ${r.append.early + r.handler.early}`);
    }
    const undelivered = modes.filter((mode) => results[mode]!.delivered < EVENTS);
    const early = modes.filter((mode) => results[mode]!.append.early + results[mode]!.handler.early > 0);
    if (undelivered.length > 0 || early.length > 0) {
      console.error(`bench: ${undelivered.length > 0 ? `undelivered in ${undelivered.join(', ')}; ` : ''}${early.length > 0 ? `EARLY in ${early.join(', ')}` : ''}`);
      process.exitCode = 1;
    }
  } finally {
    await port.close();
    await server.stop();
  }
}

await main();
