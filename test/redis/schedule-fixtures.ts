/** Helpers of the scheduled-delivery suites: the Redis clock, and reading a stream's schedule. */
import type { Cluster, Redis } from 'ioredis';
import { scheduleKeys } from '../../src/entry/schedule-keys';

/** Redis's now, ms (the clock the scripts decide "due" by). */
export async function redisNow(admin: Redis | Cluster): Promise<number> {
  const [seconds, micros] = await admin.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The ms part of an entry id: Redis's clock when the entry was appended. */
export function idMillis(entryId: string): number {
  return Number(entryId.split('-')[0]);
}

/** The schedule as event_id → due time, and how many field records it holds. */
export async function scheduleOf(admin: Redis | Cluster, stream: string): Promise<{ due: Map<string, number>; stored: number }> {
  const keys = scheduleKeys(stream);
  const flat = await admin.zrange(keys.due, 0, -1, 'WITHSCORES');
  const due = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) due.set(flat[i]!, Number(flat[i + 1]));
  return { due, stored: await admin.hlen(keys.entries) };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until Redis's clock reaches `ms`. */
export async function untilRedisTime(admin: Redis | Cluster, ms: number): Promise<void> {
  for (let now = await redisNow(admin); now < ms; now = await redisNow(admin)) await sleep(Math.min(50, ms - now));
}
