/**
 * `raw_verify`: the honest limit for a consumer that must authenticate every entry (issue
 * 15). The raw pipelined loop (bulk XACK of the previous batch + XREADGROUP, one round trip
 * per batch, no Lua, no framework) plus the textbook check of each entry's signature over
 * the canonical message of SPEC §3.2: `createHmac` + `timingSafeEqual`, written from the
 * spec here rather than borrowed from the product, so the product is measured against what
 * anyone would write.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BENCH_KEY_BYTES, BENCH_KEY_ID } from '../fixtures';
import { openRawClient, type RawClient } from './raw-client';
import { rssPeakMiB, startCpuMeter, wallClockMs, type ScenarioResult, type StreamParams } from './types';

type Entry = [Buffer, Buffer[]];

const KEY = Buffer.from(BENCH_KEY_BYTES);
const PRESENT = Buffer.from('1');
const ABSENT = Buffer.from('0');
const EMPTY = Buffer.alloc(0);

/** C = for each part: 4-byte big-endian length, then the bytes (SPEC §3.2). */
function canonical(parts: readonly Buffer[]): Buffer {
  let length = 0;
  for (const part of parts) length += 4 + part.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) {
    out.writeUInt32BE(part.length, at);
    part.copy(out, at + 4);
    at += 4 + part.length;
  }
  return out;
}

function fieldsOf(values: Buffer[]): Map<string, Buffer> {
  const fields = new Map<string, Buffer>();
  for (let i = 0; i + 1 < values.length; i += 2) fields.set(values[i]!.toString(), values[i + 1]!);
  return fields;
}

export function verifyTextbook(stream: Buffer, values: Buffer[]): boolean {
  const fields = fieldsOf(values);
  const sig = fields.get('sig');
  if (sig === undefined || fields.get('key_id')?.toString() !== BENCH_KEY_ID) return false;
  const traceparent = fields.get('traceparent');
  const message = canonical([
    stream,
    fields.get('event_id') ?? EMPTY,
    fields.get('event') ?? EMPTY,
    fields.get('payload') ?? EMPTY,
    traceparent === undefined ? ABSENT : PRESENT,
    traceparent ?? EMPTY,
  ]);
  const presented = Buffer.from(sig.toString(), 'hex');
  const mac = createHmac('sha256', KEY).update(message).digest();
  return presented.length === mac.length && timingSafeEqual(mac, presented);
}

export async function runRawVerify(params: StreamParams): Promise<ScenarioResult> {
  const client: RawClient = openRawClient(params);
  const consumer = params.consumer ?? 'bench-raw-verify';
  const stream = Buffer.from(params.stream);
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
    const reply = results[results.length - 1]![1] as Array<[Buffer, Entry[]]> | null;
    if (!reply) break;
    previous = [];
    for (const [id, values] of reply[0]![1]) {
      if (!verifyTextbook(stream, values)) throw new Error(`raw_verify: entry ${id.toString()} failed verification`);
      previous.push(id);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const endedAtMs = wallClockMs();
  const nodeCpu = cpu(acked);
  client.disconnect();
  return { entries: acked, seconds, roundTrips, rssPeakMiB: rssPeakMiB(), startedAtMs, endedAtMs, extra: { ...nodeCpu } };
}
