/**
 * The direct I2 probe, run by a handler just before it commits: is its entry still in the
 * group's PEL? A handler that has not returned and is inside its own time limit holds an
 * entry nobody may have acked for it — no verdict exists yet. Found missing, the entry was
 * acked by someone: the checker (History.earlyAck) decides whether that ack had a commit
 * behind it. The probe runs on its own connection, beside any fault proxy; a probe that
 * fails (Redis down) proves nothing and answers undefined.
 */
import { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from './child-config';

/** The probe's verdict counts only this far inside the handler's time limit (clock and scheduling slack). */
export const PROBE_MARGIN_MS = 50;

export type ProbeClient = Redis | Cluster;

/**
 * The moment the product stops waiting for the handler's verdict (epoch ms): its timeout,
 * cut at the run's settle time (SPEC §5.1 step 2: min(handlerTimeout, deadline − now −
 * settleReserve)). Past it the verdict is `retain` whatever the handler does, the product no
 * longer vouches for the entry, and a probe there proves nothing.
 */
export function handlerTimeLimit(startedAt: number, handlerTimeoutMs: number, settleBy: number): number {
  return Math.min(startedAt + handlerTimeoutMs, settleBy);
}

/** True while a probe answer read at `now` still speaks for a handler whose limit is `limit`. */
export function probeInTime(now: number, limit: number): boolean {
  return now < limit - PROBE_MARGIN_MS;
}

export function probeClient(target: RedisTarget): ProbeClient {
  const options = { maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => 50 };
  const client = target.kind === 'standalone' ? new Redis(target.url, options) : new Cluster([...target.nodes], { redisOptions: options });
  client.on('error', () => {});
  return client;
}

export async function stillPending(probe: ProbeClient, stream: string, group: string, entryId: string): Promise<boolean | undefined> {
  try {
    const rows = (await probe.xpending(stream, group, entryId, entryId, 1)) as unknown[];
    return rows.length > 0;
  } catch {
    return undefined;
  }
}

/** The group's last-delivered id: an entry above it was un-delivered by a Redis restart, not acked. */
export async function lastDeliveredId(probe: ProbeClient, stream: string, group: string): Promise<string | undefined> {
  try {
    const groups = (await probe.xinfo('GROUPS', stream)) as unknown[][];
    const info = groups.map((g) => g.map(String)).find((g) => g[g.indexOf('name') + 1] === group);
    return info?.[info.indexOf('last-delivered-id') + 1];
  } catch {
    return undefined;
  }
}
