/**
 * A deployment bound to a Redis port and an environment: builds pollers and publishers on
 * demand, reading only the secrets each one needs (a poll function deployed with its own
 * keys only must still start). Pollers and publishers are cached for the life of the
 * process, e.g. a warm Lambda container or a Worker isolate.
 */
import { webCryptoHmac, type HmacEngine } from '../auth/hmac';
import type { StreamAuth, StreamAuthInput } from '../auth/modes';
import { parseStreamAuth } from '../auth/modes';
import { withConsumerName } from '../consume/config';
import type { Poller } from '../consume/poller';
import { createPublisher, type Publisher, type PublishResult } from '../publish/publisher';
import type { RedisPort } from '../redis/port';
import { parseRetentionConfig, type RetentionConfig } from '../retention/config';
import type { DeploymentConfig } from './define-config';
import { formatLogLine } from './log-line';
import { postgresOf, type Postgres, type PostgresContext } from './postgres';
import type { StreamAuthRef } from './schema';
import { sendWakeUps, type WakeUpSender } from './wake-up-plan';
import { parseSecretKey, readSecrets, type SecretEnv } from './secrets';
import { durabilityTransportProblems } from '../redis/durability';
import { ConfigError } from '../ground/errors';

export interface RuntimeOptions {
  readonly port: RedisPort;
  readonly env: SecretEnv;
  /**
   * Signs and verifies entries (and digests producer tokens). Web Crypto by default, which
   * runs everywhere; Node entry points pass `nodeHmac` from saga-streams/node, ~20× cheaper.
   */
  readonly hmac?: HmacEngine;
  readonly now?: () => number;
  /**
   * Sends a wake-up for streams that just received entries (SQS, a Cloudflare Queue). Given
   * here, every publisher of the runtime — the publish API's and the handlers' follow-up
   * events alike — wakes the next step instead of leaving it for the next cron tick; a
   * scheduled event's wake-up is sent with a delay, to arrive at its due time (wake-up-plan.ts).
   */
  readonly wakeUp?: WakeUpSender;
  /** Where a failed wake-up is reported (one JSON line); it never fails the publish. */
  readonly log?: (line: string) => void;
  /** Opens the deployment's Postgres (config `postgres`), once, on first use. */
  readonly database?: PostgresContext['open'];
  /**
   * Record the dashboard's history (age samples, recent runs) at the end of each run. Default:
   * when the config enables the dashboard (`publishApi.dashboard`); the local stack always does.
   */
  readonly history?: boolean;
}

interface WakeUpLog {
  readonly deployment: string;
  readonly log: (line: string) => void;
  readonly now: () => number;
}

/** Wraps a publisher so a confirmed append is followed by a wake-up of its streams. */
function wakingPublisher(publisher: Publisher, wakeUp: NonNullable<RuntimeOptions['wakeUp']>, out: WakeUpLog): Publisher {
  const wake = async (results: readonly PublishResult[]) => {
    // A lost wake-up only delays delivery until the next scheduled poll.
    await sendWakeUps(wakeUp, results, (error) =>
      out.log(formatLogLine({ level: 'warn', msg: 'wake-up not sent', deployment: out.deployment, timestamp: out.now(), job: 'publish', error })),
    );
  };
  return {
    config: publisher.config,
    get duplicateHints() {
      return publisher.duplicateHints;
    },
    async publish(event, schedule) {
      const result = await publisher.publish(event, schedule);
      await wake([result]);
      return result;
    },
    async publishBatch(events) {
      const results = await publisher.publishBatch(events);
      if (results.length > 0) await wake(results);
      return results;
    },
    ready: () => publisher.ready(),
  };
}

export interface DeploymentRuntime {
  readonly config: DeploymentConfig;
  readonly port: RedisPort;
  /** The clock every poller of this runtime uses. */
  readonly now: () => number;
  /** The HMAC engine every poller and publisher of this runtime uses. */
  readonly hmac: HmacEngine;
  /** Where the runtime's own warnings go (one JSON line each). */
  readonly log: (line: string) => void;
  /** Whether runs record the dashboard's history in Redis (deployment/run-history.ts). */
  readonly history: boolean;
  /** The poller of a configured consumer; `consumerName` overrides its Redis consumer name for this run. */
  poller(name: string, consumerName?: string): Poller;
  /** A publisher signing as `producer` on every route it holds a live key for. */
  publisherFor(producer: string): Publisher;
  /** Retention settings for every stream some consumer reads, or [] without a `trim` section. */
  retention(): RetentionConfig[];
  /** The database with the inbox and outbox; DB_NOT_CONFIGURED when the entry point gave none. */
  postgres(): Promise<Postgres>;
}

function consumerAuth(ref: StreamAuthRef, secrets: Map<string, string>): StreamAuth {
  const input: StreamAuthInput =
    ref.mode === 'hmac'
      ? { mode: 'hmac', keyId: ref.keyId, key: parseSecretKey(secrets.get(ref.keyEnv)!), producer: ref.producer }
      : ref.mode === 'hmac-keyring'
        ? {
            mode: 'hmac-keyring',
            keys: Object.fromEntries(
              Object.entries(ref.keys).map(([id, k]) => [id, { producer: k.producer, key: parseSecretKey(secrets.get(k.keyEnv)!) }]),
            ),
          }
        : { mode: 'exclusive-stream', producer: ref.producer };
  return parseStreamAuth(input, 'consumer');
}

/**
 * Durability asked of a client that cannot give it (REST: no WAIT), refused when the runtime is
 * built — at start-up, not at the first publish or settle.
 */
function assertDurabilityTransport(config: DeploymentConfig, port: RedisPort): void {
  const problems = [
    ...durabilityTransportProblems(config.data.publishApi?.durability, port.transport, 'publishApi.durability'),
    ...[...config.consumers.values()].flatMap((plan) =>
      durabilityTransportProblems(plan.config.durability, port.transport, `consumers.${plan.name}.settings.durability`),
    ),
  ];
  if (problems.length > 0) throw new ConfigError(`deployment ${config.name} on the ${port.transport} client`, problems);
}

export function createRuntime(config: DeploymentConfig, options: RuntimeOptions): DeploymentRuntime {
  const { port, env } = options;
  assertDurabilityTransport(config, port);
  const hmac = options.hmac ?? webCryptoHmac;
  const log = options.log ?? console.log;
  const pollers = new Map<string, Poller>();
  const publishers = new Map<string, Publisher>();
  const dedupeWindowSeconds = config.data.publishApi?.dedupeWindowSeconds;
  const durability = config.data.publishApi?.durability;

  const publisherFor = (producer: string): Publisher => {
    const cached = publishers.get(producer);
    if (cached) return cached;
    const routes = config.routesFor(producer);
    const secrets = readSecrets(env, routes.flatMap((r) => (r.signing ? [r.signing.keyEnv] : [])), `signing keys of producer ${producer}`);
    const publisher = createPublisher({
      port,
      hmac,
      dedupeWindowSeconds,
      durability,
      routes: Object.fromEntries(
        routes.map((r) => [
          r.eventType,
          {
            stream: r.stream,
            publishDedupePrefix: config.data.streams[r.stream]?.keys?.publishDedupePrefix,
            auth: r.signing
              ? { mode: 'hmac', keyId: r.signing.keyId, key: parseSecretKey(secrets.get(r.signing.keyEnv)!), producer }
              : { mode: 'exclusive-stream', producer },
          },
        ]),
      ),
    });
    const published = options.wakeUp ? wakingPublisher(publisher, options.wakeUp, { deployment: config.name, log, now: options.now ?? Date.now }) : publisher;
    publishers.set(producer, published);
    return published;
  };

  const poller = (name: string, consumerName?: string): Poller => {
    const cacheKey = `${name}\u0000${consumerName ?? ''}`;
    const cached = pollers.get(cacheKey);
    if (cached) return cached;
    const plan = config.consumers.get(name);
    if (!plan) throw new TypeError(`no consumer named ${JSON.stringify(name)} in deployment ${config.name}`);
    const ref = config.data.streams[plan.config.stream]!.auth;
    const secrets = readSecrets(env, config.secrets.consumer(name), `secrets of consumer ${name}`);
    const built = plan.handler.build({
      port,
      config: consumerName ? withConsumerName(plan.config, consumerName) : plan.config,
      auth: consumerAuth(ref, secrets),
      hmac,
      now: options.now,
      publisherFor,
      publishesAs: plan.publishesAs,
      postgres,
    });
    pollers.set(cacheKey, built);
    return built;
  };

  const postgres = postgresOf(config, options.database);

  const retention = (): RetentionConfig[] => {
    const trim = config.data.trim;
    if (!trim) return [];
    const streams = new Map<string, number>();
    for (const plan of config.consumers.values()) {
      streams.set(plan.config.stream, Math.max(streams.get(plan.config.stream) ?? 0, plan.config.markerTtlSeconds));
    }
    return [...streams].map(([stream, markerTtlSeconds]) =>
      parseRetentionConfig({
        stream,
        keyTag: config.data.streams[stream]?.keyTag,
        keys: { dlt: config.data.streams[stream]?.keys?.dlt },
        dltRetentionSeconds: trim.dltRetentionSeconds,
        markerTtlSeconds,
        trimLimit: trim.trimLimit,
        reaper: { idleMs: trim.reaperIdleMs },
      }),
    );
  };

  const history = options.history ?? config.data.publishApi?.dashboard !== undefined;
  return { config, port, now: options.now ?? Date.now, hmac, log, history, poller, publisherFor, retention, postgres };
}
