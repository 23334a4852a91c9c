/**
 * The raw limit: no logic at all. Each round trip carries the bulk XACK of the previous
 * batch and the next XREADGROUP COUNT n, pipelined.
 */
import { openRawClient } from './raw-client';
import { rssPeakMiB, startCpuMeter, wallClockMs, type ScenarioResult, type StreamParams } from './types';

export async function runRaw(params: StreamParams): Promise<ScenarioResult> {
  const client = openRawClient(params);
  const consumer = params.consumer ?? 'bench-raw';
  let previous: Buffer[] = [];
  let acked = 0;
  let roundTrips = 0;
  const startedAtMs = wallClockMs();
  const cpu = startCpuMeter();
  const started = performance.now();
  for (;;) {
    const pipeline = client.pipeline();
    if (previous.length > 0) pipeline.xack(params.stream, params.group, ...previous);
    pipeline.callBuffer('XREADGROUP', 'GROUP', params.group, consumer, 'COUNT', params.batch, 'STREAMS', params.stream, '>');
    const results = (await pipeline.exec())!;
    roundTrips += 1;
    acked += previous.length;
    const reply = results[results.length - 1]![1] as Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null;
    if (!reply) break;
    previous = reply[0]![1].map(([id]) => id);
  }
  const seconds = (performance.now() - started) / 1000;
  const endedAtMs = wallClockMs();
  const nodeCpu = cpu(acked);
  client.disconnect();
  return { entries: acked, seconds, roundTrips, rssPeakMiB: rssPeakMiB(), startedAtMs, endedAtMs, extra: { ...nodeCpu } };
}
