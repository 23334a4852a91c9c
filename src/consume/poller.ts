/**
 * The public consumer: a validated config, a Redis port and an entry processor, bound
 * together. Holds no state between calls — everything that must survive a run (the
 * reclaim cursor, the PEL) lives in Redis.
 */
import { parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from './config';
import { assertSingleSlot } from '../entry/assert-single-slot';
import type { EntryProcessor } from './decide';
import type { StreamEntry } from '../entry/entry';
import { ConfigError } from '../ground/errors';
import { ensureGroup, type EnsureGroupResult } from './groups';
import type { RedisPort } from '../redis/port';
import { processRunMemory, type RunMemory } from './run-memory';
import { runPoller, type RunOptions } from './run';
import type { RunReport } from './report';

export interface PollerOptions {
  readonly port: RedisPort;
  readonly config: ConsumerConfigInput | ConsumerConfig;
  readonly process: EntryProcessor;
  /** With concurrency > 1, entries with the same key are handled one at a time, in order. */
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now?: () => number;
  /** What earlier runs observed (handling times); the process-wide memory by default. */
  readonly memory?: RunMemory;
}

export interface Poller {
  readonly config: ConsumerConfig;
  ensureGroup(): Promise<EnsureGroupResult>;
  run(options: RunOptions): Promise<RunReport>;
}

/** REST clients (Upstash) cannot hold a connection open: a blocking read is a config error. */
export function assertWaitSupported(config: ConsumerConfig, port: RedisPort): void {
  if (config.wait === 'block' && port.transport !== 'tcp') {
    throw new ConfigError('consumer config', [
      { path: 'wait', message: `"block" needs a TCP client; the ${port.transport} client cannot send blocking commands (use "sleep")` },
    ]);
  }
}

export function createPoller(options: PollerOptions): Poller {
  const config = parseConsumerConfig(options.config);
  if (options.port.cluster) assertSingleSlot(config.keys);
  assertWaitSupported(config, options.port);
  const deps = {
    port: options.port,
    config,
    process: options.process,
    orderingKey: options.orderingKey,
    now: options.now ?? Date.now,
    memory: options.memory ?? processRunMemory,
  };
  return {
    config,
    ensureGroup: () => ensureGroup(options.port, config.keys.stream, config.group, config.startFrom),
    run: (runOptions) => runPoller(deps, runOptions),
  };
}
