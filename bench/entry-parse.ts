/**
 * `node --expose-gc --import tsx bench/entry-parse.ts [entries] [batch] [runs] [shapes]`: the
 * cost of turning XREADGROUP entry lists into StreamEntry objects (parseEntries) plus the
 * checks every processor runs first (checkFieldNames, checkRequiredFields), without Redis.
 * Not a test: it prints ns per entry (median of `runs` passes after a warm-up) and the load
 * average, for before/after comparisons on one machine. On a loaded machine count
 * instructions instead: bundle it (esbuild), run it under `valgrind --tool=callgrind` with
 * `node --single-threaded` at two `runs` values, and divide the difference of the counts by
 * the extra passes × entries (building the lists and the warm-up cancel out).
 *
 * Shapes, each a list of Buffers as ioredis hands them over:
 * - `signed`: event, event_id, payload (300 B JSON), key_id, sig — every name a wire name;
 * - `custom`: the same plus one name that is not a wire name (`tenant`), decoded per entry;
 * - `alternating`: signed entries, every other one with a traceparent (no layout reuse).
 */
import { loadavg } from 'node:os';
import { parseEntries, type StreamEntry } from '../src/entry/entry';
import * as processor from '../src/consume/processor';
import type { RedisReply } from '../src/redis/port';
import { jsonPayload, signedFields } from './fixtures';

const STREAM = 'bench:parse';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const entries = Number(process.argv[2] ?? 100_000);
const batch = Number(process.argv[3] ?? 100);
const runs = Number(process.argv[4] ?? 15);
const shapes = (process.argv[5] ?? 'signed,custom,alternating').split(',') as Shape[];

type Shape = 'signed' | 'custom' | 'alternating';

async function entryLists(shape: Shape): Promise<RedisReply[][]> {
  const payload = jsonPayload(300);
  // Signatures are the same cost whatever the id: sign a few and reuse them round-robin.
  const signed = await Promise.all(Array.from({ length: 16 }, (_, i) => signedFields(STREAM, `ev-${i}`, payload)));
  const lists: RedisReply[][] = [];
  for (let start = 0; start < entries; start += batch) {
    const list: RedisReply[] = [];
    for (let i = start; i < Math.min(entries, start + batch); i += 1) {
      const fields = [...signed[i % 16]!];
      if (shape === 'custom') fields.push('tenant', 'acme');
      if (shape === 'alternating' && i % 2 === 0) fields.push('traceparent', TRACEPARENT);
      list.push([Buffer.from(`1764500000000-${i}`), fields.map((f) => Buffer.from(f))]);
    }
    lists.push(list);
  }
  return lists;
}

// Older trees have no checkFieldNames: the script runs unchanged against them for a before/after.
const checkFieldNames: (entry: StreamEntry) => unknown = (processor as { checkFieldNames?: (entry: StreamEntry) => unknown }).checkFieldNames ?? (() => undefined);
const admits = (entry: StreamEntry) => (checkFieldNames(entry) ?? processor.checkRequiredFields(entry)) === undefined;

function pass(lists: readonly RedisReply[][]): number {
  // With --expose-gc, each pass starts from a collected heap: less spread under load.
  (globalThis as { gc?: () => void }).gc?.();
  let admitted = 0;
  const started = process.hrtime.bigint();
  for (const list of lists) {
    for (const entry of parseEntries(list, () => 1, false)) if (admits(entry)) admitted += 1;
  }
  const ns = Number(process.hrtime.bigint() - started);
  if (admitted !== entries) throw new Error(`admitted ${admitted} of ${entries}`);
  return ns / entries;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const shape of shapes) {
  const lists = await entryLists(shape);
  pass(lists);
  const samples = Array.from({ length: runs }, () => pass(lists));
  const fmt = (n: number) => n.toFixed(0);
  console.log(`${shape.padEnd(12)} median ${fmt(median(samples))} ns/entry  (min ${fmt(Math.min(...samples))}, max ${fmt(Math.max(...samples))}; ${runs} runs of ${entries}, batch ${batch}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
}
