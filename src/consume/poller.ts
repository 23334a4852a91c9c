/**
 * The public consumer: a validated config, a Redis port and an entry processor, bound
 * together. Holds no state between calls — everything that must survive a run (the
 * reclaim cursor, the PEL) lives in Redis.
 */
import { flowOf, parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from './config';
import { assertSingleSlot } from '../entry/assert-single-slot';
import type { EntryProcessor } from './decide';
import type { StreamEntry } from '../entry/entry';
import { ConfigError } from '../ground/errors';
import { ensureGroup, type EnsureGroupResult } from './groups';
import type { RedisPort } from '../redis/port';
import { checkDurabilitySupport, durabilityTransportProblems } from '../redis/durability';
import { processRunMemory, type RunMemory } from './run-memory';
import { runPoller, type RunOptions } from './run';
import type { RunReport } from './report';
import { flowOrderingKey } from './flow-lease';

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

/** Settle durability cannot be given over REST (Upstash has no WAIT): a config error at construction. */
export function assertDurabilityTransport(config: ConsumerConfig, port: RedisPort): void {
  const problems = durabilityTransportProblems(config.durability, port.transport, 'durability');
  if (problems.length > 0) throw new ConfigError('consumer config', problems);
}

/**
 * With flow leases a run handles its entries of one flow key one at a time (the lease admits
 * a run, not a handler): the flow key is the ordering key, and a second one is refused.
 */
function orderingKeyFor(config: ConsumerConfig, orderingKey: PollerOptions['orderingKey']): PollerOptions['orderingKey'] {
  if (flowOf(config) === undefined) return orderingKey;
  if (orderingKey !== undefined) {
    throw new ConfigError('consumer config', [
      { path: 'orderingKey', message: 'must be left unset with flow: the flow key orders a run\'s entries (one handler per key and run)' },
    ]);
  }
  return flowOrderingKey;
}

export function createPoller(options: PollerOptions): Poller {
  const config = parseConsumerConfig(options.config);
  if (options.port.cluster) assertSingleSlot(config.keys);
  assertWaitSupported(config, options.port);
  assertDurabilityTransport(config, options.port);
  // Before the first claim (a refusal must not strand handled entries): once per port.
  const serverReady = () => checkDurabilitySupport(options.port, config.durability, 'durability', 'consumer config');
  const deps = {
    port: options.port,
    config,
    process: options.process,
    orderingKey: orderingKeyFor(config, options.orderingKey),
    now: options.now ?? Date.now,
    memory: options.memory ?? processRunMemory,
  };
  return {
    config,
    ensureGroup: () => ensureGroup(options.port, config.keys.stream, config.group, config.startFrom),
    run: async (runOptions) => {
      await serverReady();
      return runPoller(deps, runOptions);
    },
  };
}
