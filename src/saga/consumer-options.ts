/**
 * What both saga consumers need besides their own gate, and the one place that turns it
 * into a core poller: every configuration problem (consumer config, auth, route) is
 * reported in one ConfigError rather than the first one found.
 */
import type { HmacEngine } from '../auth/hmac';
import { checkStreamAuth, type StreamAuth, type StreamAuthInput } from '../auth/modes';
import { flowOf, isParsedConfig, parseConsumerConfig, withChanges, type ConsumerConfig, type ConsumerConfigInput } from '../consume/config';
import type { EntryProcessor } from '../consume/decide';
import type { StreamEntry } from '../entry/entry';
import { ConfigError, errorCode, type ConfigProblem } from '../ground/errors';
import { createPoller, type Poller } from '../consume/poller';
import type { RedisPort } from '../redis/port';
import type { SagaHandler } from './delivery';
import { instanceOrderingKey } from './ordering';

/**
 * Saga consumers' flow control when their config names none (SPEC §5.7): one handler per saga
 * instance across every run of the group, in order — a later step never overtakes an earlier
 * one waiting on its retry. The key is the entry's `flow_key` (the outbox relay writes a row's
 * ordering key there, so saga rows take the instance id); entries without one flow as before.
 * `flow: false` turns it off.
 */
export const SAGA_FLOW = { limit: 1, order: 'strict' } as const;
const FLOW_OFF = 'saga consumers have config.flow on by default; set config.flow to false to go without it';

export interface SagaConsumerOptions<E> {
  readonly port: RedisPort;
  /** `flow` absent: SAGA_FLOW; `flow: false`: off. */
  readonly config: ConsumerConfigInput | ConsumerConfig;
  /** How entries on this stream prove their origin (SPEC §3.2). */
  readonly auth: StreamAuth | StreamAuthInput;
  /** Checks signatures; Web Crypto by default. On Node pass `nodeHmac` (saga-streams/node). */
  readonly hmac?: HmacEngine;
  readonly handler: SagaHandler<E>;
  /** Only with `config.flow: false` and concurrency > 1 (default: the envelope's instance_id); with flow the flow key orders a run's entries. */
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now?: () => number;
}

/** The parsed config with the saga default for `flow` (SAGA_FLOW) when it names none (throws ConfigError). */
function withSagaFlow(input: ConsumerConfigInput | ConsumerConfig): ConsumerConfig {
  if (input.flow !== undefined) return parseConsumerConfig(input);
  if (input.wait === 'block') {
    throw new ConfigError('consumer config', [
      {
        path: 'wait',
        message: `must be "sleep" or unset with flow, which a blocking read would pass (${FLOW_OFF})`,
      },
    ]);
  }
  // A parsed config (a deployment's) is parsed again with the default, its key names kept.
  return isParsedConfig(input) ? withChanges(input, { flow: SAGA_FLOW }) : parseConsumerConfig({ ...input, flow: SAGA_FLOW });
}

function configProblems(input: SagaConsumerOptions<unknown>['config']): { config?: ConsumerConfig; problems: ConfigProblem[] } {
  try {
    return { config: withSagaFlow(input), problems: [] };
  } catch (error) {
    if (errorCode(error) !== 'CONFIG_INVALID') throw error;
    return { problems: [...(error as ConfigError).problems] };
  }
}

export function buildSagaPoller<E>(
  subject: string,
  options: SagaConsumerOptions<E>,
  extraProblems: readonly ConfigProblem[],
  /** `flowOn`: the consumer holds entries to flow leases, so their flow keys are checked against the envelope. */
  processorFor: (stream: string, auth: StreamAuth, flowOn: boolean) => EntryProcessor,
): Poller {
  const parsed = configProblems(options.config);
  const checked = checkStreamAuth(options.auth, 'consumer');
  const problems = [...parsed.problems.map((p) => ({ ...p, path: p.path ? `config.${p.path}` : 'config' })), ...checked.problems, ...extraProblems];
  if (options.orderingKey !== undefined && parsed.config !== undefined && flowOf(parsed.config) !== undefined) {
    problems.push({ path: 'orderingKey', message: `must be left unset with flow: the flow key orders a run's entries (${FLOW_OFF})` });
  }
  if (problems.length > 0 || !parsed.config || !checked.auth) throw new ConfigError(subject, problems);
  const config = parsed.config;
  return createPoller({
    port: options.port,
    config,
    process: processorFor(config.keys.stream, checked.auth, flowOf(config) !== undefined),
    // With flow leases the flow key orders a run's entries (poller.ts).
    orderingKey: options.orderingKey ?? (config.concurrency > 1 && flowOf(config) === undefined ? instanceOrderingKey : undefined),
    now: options.now,
  });
}
