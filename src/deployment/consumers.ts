/**
 * How a deployment says what a consumer does: a factory that, given the resolved port,
 * consumer config and stream auth, builds the poller. Config stays data plus these
 * factories, so infrastructure code can read schedules without running any handler.
 */
import type { HmacEngine } from '../auth/hmac';
import type { StreamAuth } from '../auth/modes';
import { PostgresError } from '../postgres/errors';
import type { Postgres } from './postgres-kit';
import { ConfigError } from '../ground/errors';
import { createSignedProcessor, type SignedDelivery } from '../admission/signed-processor';
import type { ConsumerConfig } from '../consume/config';
import { createPoller, type Poller } from '../consume/poller';
import type { PayloadDecoder } from '../consume/processor';
import { rawPayload } from '../consume/processor';
import type { RedisPort } from '../redis/port';
import { createCapabilityCommandConsumer, createCommandConsumer, type CapabilityRoute, type CommandRoute } from '../saga/command-consumer';
import type { SagaDelivery } from '../saga/delivery';
import type { Publisher } from '../publish/publisher';
import type { HandlerOutcome } from '../verdict/verdict';
import type { CommandEnvelope, ResultEnvelope } from '../saga/envelopes';
import { createResultConsumer } from '../saga/result-consumer';

export interface PollerDeps {
  readonly port: RedisPort;
  readonly config: ConsumerConfig;
  readonly auth: StreamAuth;
  /** Checks signatures (the runtime's engine). */
  readonly hmac?: HmacEngine;
  readonly now?: () => number;
  /** Publishers for the identities the consumer declared in `publishesAs`. */
  readonly publisherFor: (producer: string) => Publisher;
  /** The identities this consumer may publish as; any other is refused. */
  readonly publishesAs: readonly string[];
  /** The deployment's database with its inbox and outbox (config `postgres`). */
  readonly postgres?: () => Promise<Postgres>;
}

/** What a handler gets besides the delivery: publishers to emit follow-up events with. */
export interface HandlerContext {
  publisherFor(producer: string): Publisher;
  /** The deployment's database, inbox and outbox; rejects with DB_NOT_CONFIGURED without one. */
  postgres(): Promise<Postgres>;
}

type WithContext<D> = (delivery: D, context: HandlerContext) => Promise<HandlerOutcome> | HandlerOutcome;

function bind<D>(handler: WithContext<D>, deps: PollerDeps): (delivery: D) => Promise<HandlerOutcome> | HandlerOutcome {
  const context: HandlerContext = {
    // A handler signs only as the identities its consumer declared: where every key sits in
    // one environment (Worker, local stack), nothing else stops a participant from signing
    // as the orchestrator, and the result consumer's producer checks rely on identities.
    publisherFor(producer) {
      if (!deps.publishesAs.includes(producer)) {
        throw new ConfigError('handler context', [
          { path: 'publishesAs', message: `does not list "${producer}": this consumer may not publish as it` },
        ]);
      }
      return deps.publisherFor(producer);
    },
    postgres: () => (deps.postgres ? deps.postgres() : Promise.reject(new PostgresError('DB_NOT_CONFIGURED', 'this consumer was built without a database'))),
  };
  return (delivery) => handler(delivery, context);
}

/** Builds the poller of one consumer; `kind` is informational (logs, docs). */
export interface ConsumerFactory {
  readonly kind: 'command' | 'capability' | 'result' | 'entries';
  build(deps: PollerDeps): Poller;
}

/** A participant bound to one workflow, definition version, digest and step (SPEC §9). */
export function commandConsumer(route: CommandRoute, handler: WithContext<SagaDelivery<CommandEnvelope>>): ConsumerFactory {
  return { kind: 'command', build: (deps) => createCommandConsumer({ ...deps, route, handler: bind(handler, deps) }) };
}

/** A participant bound to one workflow, version and step, without the definition digest. */
export function capabilityConsumer(route: CapabilityRoute, handler: WithContext<SagaDelivery<CommandEnvelope>>): ConsumerFactory {
  return { kind: 'capability', build: (deps) => createCapabilityCommandConsumer({ ...deps, route, handler: bind(handler, deps) }) };
}

/**
 * The orchestrator's results; `allowedProducers` maps step → producers that may report it,
 * `timeoutProducer` names the identity whose results are step timeouts (saga/timeouts.ts).
 */
export function resultConsumer(
  handler: WithContext<SagaDelivery<ResultEnvelope>>,
  options: { allowedProducers?: Readonly<Record<string, readonly string[]>>; timeoutProducer?: string } = {},
): ConsumerFactory {
  return {
    kind: 'result',
    build: (deps) =>
      createResultConsumer({ ...deps, handler: bind(handler, deps), allowedProducers: options.allowedProducers, timeoutProducer: options.timeoutProducer }),
  };
}

/** Any signed (or exclusive-stream) entries, decoded by `decode` (raw bytes by default). */
export function entryConsumer<P = Uint8Array>(
  handler: WithContext<SignedDelivery<P>>,
  decode: PayloadDecoder<P> = rawPayload as unknown as PayloadDecoder<P>,
): ConsumerFactory {
  return {
    kind: 'entries',
    build: (deps) =>
      createPoller({
        port: deps.port,
        config: deps.config,
        now: deps.now,
        process: createSignedProcessor({ stream: deps.config.keys.stream, auth: deps.auth, decode, handler: bind(handler, deps), hmac: deps.hmac }),
      }),
  };
}
