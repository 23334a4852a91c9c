/**
 * Putting back what a stopping run claimed but never handed to a handler (SPEC §5.1 (b) and
 * "Held ordering keys"), through release.lua, each entry with its delivery count from before
 * this run's claim (no delivery is counted for an attempt that never happened):
 * - released entries get idle = minIdle, or the idle a reclaimed one had when this run took it
 *   when that is longer: any run reclaims them at once, and an entry whose retry backoff had
 *   passed (SPEC §5.6) does not wait it again for an attempt that never reached a handler;
 * - held entries (behind a retained entry of their ordering key) keep the idle time since
 *   this run claimed them, so they come back exactly when the entry that holds their key
 *   does, and no other run overtakes it.
 * Sent in the same round trip as the run's final settle.
 */
import type { ConsumerConfig } from './config';
import type { StreamEntry } from '../entry/entry';
import { releaseScript } from '../generated/lua-scripts';
import type { RedisArg } from '../redis/port';
import type { ScriptCall } from '../redis/script';

/** An entry held behind its ordering key: what is needed to put it back as it was. */
export interface HeldEntry {
  readonly id: string;
  readonly deliveries: number;
  /** Epoch ms when this run's claim took it. */
  readonly claimedAt: number;
}

export function heldEntry(entry: StreamEntry, claimedAt: number): HeldEntry {
  return { id: entry.id, deliveries: entry.deliveries, claimedAt };
}

function putBackCall(config: ConsumerConfig, rows: ReadonlyArray<readonly [id: string, deliveries: number, idleMs: number]>): ScriptCall | undefined {
  if (rows.length === 0) return undefined;
  const args: RedisArg[] = [config.group, config.consumer];
  // `deliveries` counts this run's claim (1 for a fresh read): put back the count before it.
  for (const [id, deliveries, idleMs] of rows) args.push(id, Math.max(0, deliveries - 1), Math.max(0, Math.floor(idleMs)));
  return { script: releaseScript, keys: [config.keys.stream], args };
}

/** The release.lua call giving these entries back to any run at once, or undefined when there are none. */
export function releaseCall(config: ConsumerConfig, entries: readonly StreamEntry[]): ScriptCall | undefined {
  return putBackCall(config, entries.map((entry) => [entry.id, entry.deliveries, Math.max(config.minIdleMs, entry.idleBeforeClaimMs ?? 0)] as const));
}

/** The release.lua call putting held entries back as they were (idle since their claim), or undefined when there are none. */
export function holdCall(config: ConsumerConfig, held: Iterable<HeldEntry>, now: number): ScriptCall | undefined {
  return putBackCall(config, [...held].map((entry) => [entry.id, entry.deliveries, now - entry.claimedAt] as const));
}
