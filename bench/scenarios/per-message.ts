/**
 * The seed's design as a baseline: per round an XAUTOCLAIM and an XREADGROUP, each its own
 * round trip, then one awaited XACK round trip per entry. Signatures verified as in the product.
 */
import { Redis } from 'ioredis';
import { SecretKey } from '../../src/auth/secret';
import { verifyEntry } from '../../src/auth/signature';
import { nodeHmac } from '../../src/node/crypto';
import { BENCH_KEY } from '../fixtures';
import { rssPeakMiB, startCpuMeter, type ScenarioResult, type StreamParams } from './types';

type Entry = [Buffer, Buffer[]];

function field(values: Buffer[], name: string): Buffer {
  for (let i = 0; i + 1 < values.length; i += 2) if (values[i]!.toString() === name) return values[i + 1]!;
  throw new Error(`missing ${name}`);
}

export async function runPerMessage(params: StreamParams, key: SecretKey = BENCH_KEY): Promise<ScenarioResult> {
  const redis = new Redis(params.redisUrl);
  let roundTrips = 0;
  let acked = 0;
  const cpu = startCpuMeter();
  const started = performance.now();
  for (;;) {
    await redis.xautoclaim(params.stream, params.group, 'bench-seed', 60_000, '0-0', 'COUNT', params.batch);
    const reply = (await redis.callBuffer(
      'XREADGROUP', 'GROUP', params.group, 'bench-seed', 'COUNT', params.batch, 'STREAMS', params.stream, '>',
    )) as Array<[Buffer, Entry[]]> | null;
    roundTrips += 2;
    if (!reply) break;
    for (const [id, values] of reply[0]![1]) {
      const ok = await verifyEntry(
        key,
        { stream: params.stream, eventId: field(values, 'event_id'), eventType: field(values, 'event'), payload: field(values, 'payload') },
        field(values, 'sig').toString(),
        nodeHmac,
      );
      if (!ok) throw new Error('bad signature in fixture');
      await redis.xack(params.stream, params.group, id);
      roundTrips += 1;
      acked += 1;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const nodeCpu = cpu(acked);
  redis.disconnect();
  return { entries: acked, seconds, roundTrips, rssPeakMiB: rssPeakMiB(), extra: { ...nodeCpu } };
}
