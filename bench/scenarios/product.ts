/**
 * This product's run loop through its public run API (`poller.run`, drain mode), signatures
 * verified, no-op committed handler, default config beyond batch and time limits — so it
 * measures whatever the run loop does today (overlap, byte budget, the default exponential
 * retry backoff) without changes here. `params.backoff` picks the retry backoff.
 */
import { createPoller } from '../../src/consume/poller';
import { connectIoredis, connectIoredisCluster } from '../../src/redis/ioredis-port';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { benchProcessor } from './processor';
import { steadyRoundTrips, type RoundSample } from './steady-rounds';
import { rssPeakMiB, startCpuMeter, wallClockMs, type ScenarioResult, type StreamParams } from './types';

export interface ProductOptions {
  readonly connect?: (params: StreamParams) => RedisPort;
  /** Round trips so far as the server side counts them (the REST server); the port's count otherwise. */
  readonly roundTripCounter?: () => number;
}

const connectFor = (params: StreamParams): RedisPort =>
  params.clusterNodes ? connectIoredisCluster([...params.clusterNodes]) : connectIoredis(params.redisUrl);

export async function runProduct(params: StreamParams, options: ProductOptions = {}): Promise<ScenarioResult> {
  const port = meterPort((options.connect ?? connectFor)(params));
  const counter = options.roundTripCounter ?? (() => port.roundTrips);
  const poller = createPoller({
    port,
    config: {
      stream: params.stream,
      group: params.group,
      consumer: params.consumer ?? 'bench-product',
      batch: params.batch,
      handlerTimeoutMs: 5_000,
      runBudgetMs: 600_000,
      minIdleMs: 1_200_000,
      ...(params.backoff === undefined ? {} : { retry: { backoff: params.backoff } }),
      ...(params.flow === undefined ? {} : { flow: params.flow }),
      ...(params.rateLimit === undefined ? {} : { rateLimit: params.rateLimit }),
    },
    process: benchProcessor(params.stream, params.hmac),
  });
  const rounds: RoundSample[] = [];
  let counted = counter();
  const onRound = (round: { handled: number }) => {
    const now = counter();
    rounds.push({ handled: round.handled, roundTrips: now - counted });
    counted = now;
  };
  const startedAtMs = wallClockMs();
  const cpu = startCpuMeter();
  const started = performance.now();
  const report = await poller.run({ mode: 'drain', onRound });
  const seconds = (performance.now() - started) / 1000;
  const endedAtMs = wallClockMs();
  const nodeCpu = cpu(report.acked);
  await port.close();
  if (!params.shared && report.acked !== params.count) throw new Error(`product acked ${report.acked} of ${params.count}`);
  const steady = steadyRoundTrips(rounds, params.batch);
  return {
    entries: report.acked,
    seconds,
    roundTrips: counter(),
    rounds: report.rounds,
    rssPeakMiB: rssPeakMiB(),
    startedAtMs,
    endedAtMs,
    extra: {
      ...nodeCpu,
      // Entries a claim took and put back because their flow key was busy elsewhere (SPEC §5.7).
      ...(params.flow === undefined ? {} : { flowParked: report.flowParked }),
      ...(steady ? { steadyRounds: steady.rounds, roundTripsPerSteadyRound: steady.perRound, roundTripsPerSteadyRoundMax: steady.max } : {}),
    },
  };
}
