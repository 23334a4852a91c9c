/**
 * Benchmark fixtures: entries shaped like real ones (`event`, `event_id`, a JSON payload,
 * `key_id`, `sig`), appended in pipelined chunks through append.lua (as the product's writers
 * append). Signing happens once per entry here so the measured consumers verify real signatures.
 */
import type { Cluster, Redis } from 'ioredis';
import { SecretKey } from '../src/auth/secret';
import { signEntry } from '../src/auth/signature';
import { nodeHmac } from '../src/node/crypto';
import { sizeKeys } from '../src/entry/size-keys';
import { appendScript } from '../src/generated/lua-scripts';

export const BENCH_KEY_ID = 'bench-1';
/** The key's bytes, for the textbook verifier of `raw_verify` (the product gets the SecretKey). */
export const BENCH_KEY_BYTES = new TextEncoder().encode('bench-hmac-key-0123456789abcdef0123456789abcdef');
export const BENCH_KEY = SecretKey.from(BENCH_KEY_BYTES);
export const EVENT_TYPE = 'order.placed';
const PREFILL_CHUNK = 250;

/** A JSON document of about `bytes` bytes (the padding keeps it valid JSON). */
export function jsonPayload(bytes: number, sentAt?: number): string {
  const base = JSON.stringify({ order: 'o-1', amount: 4200, currency: 'EUR', sentAt: sentAt ?? 0, pad: '' });
  return base.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, bytes - base.length))}"`);
}

export async function signedFields(stream: string, eventId: string, payload: string, flowKey?: string): Promise<string[]> {
  const sig = await signEntry(BENCH_KEY, { stream, eventId, eventType: EVENT_TYPE, payload }, nodeHmac);
  // A flow key sits where the publisher writes it: after the signed fields, unsigned (SPEC §5.7).
  const flow = flowKey === undefined ? [] : ['flow_key', flowKey];
  return ['event', EVENT_TYPE, 'event_id', eventId, 'payload', payload, ...flow, 'key_id', BENCH_KEY_ID, 'sig', sig];
}

/**
 * Appends one entry as the product's writers do: through append.lua, which records the
 * entry's size beside it, so consumers read the stream natively (SPEC §5.1 "Byte budget").
 */
export async function appendEntry(redis: Redis | Cluster, stream: string, fields: readonly string[]): Promise<string> {
  const sizes = sizeKeys(stream);
  return (await redis.evalsha(await appendSha(redis), 3, stream, sizes.counts, sizes.large, ...fields)) as string;
}

const loaded = new WeakMap<Redis | Cluster, Promise<string>>();
/** Loads append.lua where EVALSHA will run: on a Cluster every master, not one node ioredis picks. */
function appendSha(redis: Redis | Cluster): Promise<string> {
  let sha = loaded.get(redis);
  if (sha === undefined) {
    const nodes: Redis[] = 'nodes' in redis && typeof redis.nodes === 'function' ? (redis as Cluster).nodes('master') : [redis as Redis];
    sha = Promise.all(nodes.map((node) => node.script('LOAD', appendScript.text) as Promise<string>)).then((shas) => shas[0]!);
    loaded.set(redis, sha);
  }
  return sha;
}

/** Appends `count` signed entries (no group: each run makes its own, see resetGroup), as appendEntry does. */
/** `flowKeys`: entry i names flow key `k<i mod flowKeys>` (none without it). */
export async function prefillStream(redis: Redis | Cluster, stream: string, count: number, payloadBytes: number, flowKeys?: number): Promise<void> {
  const sizes = sizeKeys(stream);
  await redis.del(stream, sizes.counts, sizes.large);
  const payload = jsonPayload(payloadBytes);
  const sha = await appendSha(redis);
  for (let start = 0; start < count; start += PREFILL_CHUNK) {
    const pipeline = redis.pipeline();
    const end = Math.min(count, start + PREFILL_CHUNK);
    for (let i = start; i < end; i += 1) pipeline.evalsha(sha, 3, stream, sizes.counts, sizes.large, ...(await signedFields(stream, `ev-${i}`, payload, flowKeys === undefined ? undefined : `k${i % flowKeys}`)));
    // A refused append (NOSCRIPT, OOM) must fail the prefill, not leave a short stream behind.
    const failed = (await pipeline.exec())?.find(([error]) => error !== null);
    if (failed) throw new Error(`prefill of ${stream} failed: ${String(failed[0])}`);
  }
}

/**
 * A fresh group at 0-0: the next run reads every entry again. Acks delete nothing and the
 * product writes per-entry state only for dead-letters, so one prefilled stream serves every
 * run and scenario (prefilling signed entries costs more than most runs).
 */
export async function resetGroup(redis: Redis | Cluster, stream: string, group: string): Promise<void> {
  await redis.xgroup('DESTROY', stream, group);
  await redis.xgroup('CREATE', stream, group, '0-0');
}

/** Cluster hash tags that land on three different masters, so each stream has a master to itself. */
export async function tagsOnEachMaster(cluster: Cluster, masters: number): Promise<string[]> {
  const slots = await cluster.cluster('SLOTS');
  const owner = (slot: number) => slots.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
  const chosen = new Map<number | undefined, string>();
  for (let i = 0; chosen.size < masters && i < 1_000; i += 1) {
    const tag = `t${i}`;
    const node = owner((await cluster.cluster('KEYSLOT', tag)) as number);
    if (!chosen.has(node)) chosen.set(node, tag);
  }
  return [...chosen.values()];
}
