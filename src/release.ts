/**
 * Releasing what a stopping run claimed but never handed to a handler (SPEC §5.1 (b)):
 * release.lua puts each entry back with idle = minIdle and its delivery count from before
 * this run's claim, so any run reclaims it at once and no delivery is counted for an
 * attempt that never happened. Sent in the same round trip as the run's final settle.
 */
import type { ConsumerConfig } from './config';
import type { StreamEntry } from './entry';
import { releaseScript } from './generated/lua-scripts';
import type { RedisArg } from './redis/port';
import type { ScriptCall } from './redis/script';

/** The release.lua call for these entries, or undefined when there are none. */
export function releaseCall(config: ConsumerConfig, entries: readonly StreamEntry[]): ScriptCall | undefined {
  if (entries.length === 0) return undefined;
  const args: RedisArg[] = [config.group, config.consumer, config.minIdleMs];
  // `deliveries` counts this run's claim (1 for a fresh read): put back the count before it.
  for (const entry of entries) args.push(entry.id, Math.max(0, entry.deliveries - 1));
  return { script: releaseScript, keys: [config.keys.stream], args };
}
