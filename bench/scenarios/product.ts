/** This product's run loop: drain mode, signatures verified, no-op committed handler. */
import { createPoller } from '../../src/poller';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { benchProcessor } from './processor';
import { rssPeakMiB, type ScenarioResult, type StreamParams } from './types';

export async function runProduct(params: StreamParams, connect: (url: string) => RedisPort = connectIoredis): Promise<ScenarioResult> {
  const port = meterPort(connect(params.redisUrl));
  const poller = createPoller({
    port,
    config: {
      stream: params.stream,
      group: params.group,
      consumer: 'bench-product',
      batch: params.batch,
      handlerTimeoutMs: 5_000,
      runBudgetMs: 600_000,
      minIdleMs: 1_200_000,
    },
    process: benchProcessor(params.stream),
  });
  // Round trips are judged on rounds that handled entries; a drain ends with one empty
  // claim, which has nothing to settle and so costs one.
  const busy: number[] = [];
  const started = performance.now();
  const report = await poller.run({ mode: 'drain', onRound: (round) => round.handled > 0 && busy.push(round.roundTrips) });
  const seconds = (performance.now() - started) / 1000;
  await port.close();
  if (report.acked !== params.count) throw new Error(`product acked ${report.acked} of ${params.count}`);
  return {
    entries: report.acked,
    seconds,
    roundTrips: report.roundTrips,
    rounds: report.rounds,
    rssPeakMiB: rssPeakMiB(),
    extra: { roundTripsPerBusyRoundMax: Math.max(...busy), roundTripsPerBusyRoundMin: Math.min(...busy), busyRounds: busy.length },
  };
}
