/**
 * What both saga consumers need besides their own gate, and the one place that turns it
 * into a core poller: every configuration problem (consumer config, auth, route) is
 * reported in one ConfigError rather than the first one found.
 */
import type { HmacEngine } from '../auth/hmac';
import { checkStreamAuth, type StreamAuth, type StreamAuthInput } from '../auth/modes';
import { parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from '../consume/config';
import type { EntryProcessor } from '../consume/decide';
import type { StreamEntry } from '../entry/entry';
import { ConfigError, errorCode, type ConfigProblem } from '../ground/errors';
import { createPoller, type Poller } from '../consume/poller';
import type { RedisPort } from '../redis/port';
import type { SagaHandler } from './delivery';
import { instanceOrderingKey } from './ordering';

export interface SagaConsumerOptions<E> {
  readonly port: RedisPort;
  readonly config: ConsumerConfigInput | ConsumerConfig;
  /** How entries on this stream prove their origin (SPEC §3.2). */
  readonly auth: StreamAuth | StreamAuthInput;
  /** Checks signatures; Web Crypto by default. On Node pass `nodeHmac` (saga-streams/node). */
  readonly hmac?: HmacEngine;
  readonly handler: SagaHandler<E>;
  /** With concurrency > 1; defaults to the envelope's instance_id. */
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now?: () => number;
}

function configProblems(input: SagaConsumerOptions<unknown>['config']): { config?: ConsumerConfig; problems: ConfigProblem[] } {
  try {
    return { config: parseConsumerConfig(input), problems: [] };
  } catch (error) {
    if (errorCode(error) !== 'CONFIG_INVALID') throw error;
    return { problems: [...(error as ConfigError).problems] };
  }
}

export function buildSagaPoller<E>(
  subject: string,
  options: SagaConsumerOptions<E>,
  extraProblems: readonly ConfigProblem[],
  processorFor: (stream: string, auth: StreamAuth) => EntryProcessor,
): Poller {
  const parsed = configProblems(options.config);
  const checked = checkStreamAuth(options.auth, 'consumer');
  const problems = [...parsed.problems.map((p) => ({ ...p, path: p.path ? `config.${p.path}` : 'config' })), ...checked.problems, ...extraProblems];
  if (problems.length > 0 || !parsed.config || !checked.auth) throw new ConfigError(subject, problems);
  const config = parsed.config;
  return createPoller({
    port: options.port,
    config,
    process: processorFor(config.keys.stream, checked.auth),
    // With flow leases the flow key orders a run's entries (poller.ts).
    orderingKey: options.orderingKey ?? (config.concurrency > 1 && config.flow === undefined ? instanceOrderingKey : undefined),
    now: options.now,
  });
}
