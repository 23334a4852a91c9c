/**
 * Publish → handler latency in continuous mode: a steady publisher (signed entries, one
 * append.lua each, as the product's writers append) and a continuous-mode poller in one process, so both read the same clock.
 */
import { Redis } from 'ioredis';
import { createPoller } from '../../src/consume/poller';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { decodeText } from '../../src/ground/text';
import { Verdicts } from '../../src/verdict/verdict';
import { appendEntry, jsonPayload, signedFields } from '../fixtures';
import { benchProcessor } from './processor';
import { rssPeakMiB, type ScenarioResult } from './types';

export interface LatencyParams {
  readonly redisUrl: string;
  readonly stream: string;
  readonly ratePerSecond: number;
  readonly messages: number;
  /** Published first at the same rate and not sampled: the process's first second. */
  readonly warmupMessages: number;
}

const nowMs = () => performance.timeOrigin + performance.now();

export async function runLatency(params: LatencyParams): Promise<ScenarioResult> {
  const producer = new Redis(params.redisUrl);
  await producer.del(params.stream);
  await producer.xgroup('CREATE', params.stream, 'bench', '$', 'MKSTREAM');
  const port = connectIoredis(params.redisUrl);
  const verify = benchProcessor(params.stream);
  const latencies: number[] = [];
  const stop = new AbortController();
  const poller = createPoller({
    port,
    config: { stream: params.stream, group: 'bench', consumer: 'latency', blockMs: 1_000, runBudgetMs: 600_000, minIdleMs: 1_200_000 },
    process: async (entry, context) => {
      const verdict = await verify(entry, context);
      const sentAt = (JSON.parse(decodeText(entry.fields.get('payload')!)) as { sentAt: number }).sentAt;
      const sequence = Number(decodeText(entry.fields.get('event_id')!).slice('lat-'.length));
      if (sequence >= params.warmupMessages) latencies.push(nowMs() - sentAt);
      if (latencies.length === params.messages) stop.abort();
      return verdict.kind === 'ack' ? verdict : Verdicts.retain('handler_error');
    },
  });
  const running = poller.run({ mode: 'continuous', signal: stop.signal });
  const interval = 1_000 / params.ratePerSecond;
  const started = nowMs();
  for (let i = 0; i < params.warmupMessages + params.messages; i += 1) {
    const due = started + i * interval;
    const wait = due - nowMs();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const fields = await signedFields(params.stream, `lat-${i}`, jsonPayload(300, nowMs()));
    await appendEntry(producer, params.stream, fields);
  }
  const report = await running;
  producer.disconnect();
  await port.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return {
    entries: latencies.length,
    seconds: (nowMs() - started) / 1000,
    roundTrips: report.roundTrips,
    rounds: report.rounds,
    rssPeakMiB: rssPeakMiB(),
    extra: { p50: pct(50), p90: pct(90), p99: pct(99), max: latencies[latencies.length - 1]! },
  };
}
