/**
 * `defineConfig`: validates a deployment once, at import time of the config module, and
 * fails listing every problem by path (cross-references included: routes to declared
 * streams, producers able to sign what they publish, consumer budgets). The result is
 * frozen and holds no secret values — only environment variable names.
 */
import { parseConsumerConfig, type ConsumerConfig } from '../consume/config';
import { problemsOf } from '../ground/config-problems';
import { ConfigError, errorCode, type ConfigProblem } from '../ground/errors';
import type { ConsumerFactory } from './consumers';
import { deploymentSchema, type DeploymentData, type DeploymentInput, type StreamAuthRef, type WakeUpTarget } from './schema';
import { IN_ENGLISH } from '../ground/zod-messages';

export interface ConsumerPlan {
  readonly name: string;
  readonly config: ConsumerConfig;
  readonly schedule: string | undefined;
  readonly wakeUp: boolean;
  readonly mode: 'drain' | 'continuous';
  readonly publishesAs: readonly string[];
  readonly handler: ConsumerFactory;
}

/** How producer P appends one event type: the stream, and the key it signs with (if any). */
export interface SigningRoute {
  readonly eventType: string;
  readonly stream: string;
  readonly signing: { readonly keyId: string; readonly keyEnv: string } | undefined;
}

export interface DeploymentConfig {
  readonly name: string;
  readonly data: DeploymentData;
  readonly consumers: ReadonlyMap<string, ConsumerPlan>;
  /** Routes producer `producer` may sign for; [] when it holds no key for any. */
  routesFor(producer: string): readonly SigningRoute[];
  /** The wake-up target of one platform's kind, if the deployment declares one. */
  wakeUpTarget<K extends WakeUpTarget['kind']>(kind: K): Extract<WakeUpTarget, { kind: K }> | undefined;
  /** Environment variable names holding secrets, by what needs them (for least-privilege IAM). */
  readonly secrets: DeploymentSecrets;
}

export interface DeploymentSecrets {
  readonly redis: readonly string[];
  /** Verification keys a consumer needs, plus the signing keys of what it publishes as. */
  consumer(name: string): readonly string[];
  /** Token variables and signing keys of the publish API. */
  readonly publishApi: readonly string[];
  /** The Postgres connection string's variable (handlers and the relay), or []. */
  readonly database: readonly string[];
  /** What the relay job reads: the database and the signing keys of every `publishesAs` producer. */
  readonly relay: readonly string[];
}

/** The key producer P signs with on a stream, or undefined (exclusive stream of P), or 'none'. */
function signingKeyOf(auth: StreamAuthRef, producer: string): SigningRoute['signing'] | 'cannot' {
  if (auth.mode === 'exclusive-stream') return auth.producer === producer ? undefined : 'cannot';
  if (auth.mode === 'hmac') return auth.producer === producer ? { keyId: auth.keyId, keyEnv: auth.keyEnv } : 'cannot';
  const live = Object.entries(auth.keys).filter(([, k]) => k.producer === producer && !k.retired);
  return live.length === 1 ? { keyId: live[0]![0], keyEnv: live[0]![1].keyEnv } : 'cannot';
}

function verificationEnvs(auth: StreamAuthRef): string[] {
  if (auth.mode === 'hmac') return [auth.keyEnv];
  if (auth.mode === 'hmac-keyring') return Object.values(auth.keys).map((k) => k.keyEnv);
  return [];
}

function routesFor(data: DeploymentData, producer: string, only?: readonly string[]): SigningRoute[] {
  return Object.entries(data.routes).flatMap(([eventType, stream]) => {
    if (only && !only.includes(eventType)) return [];
    const spec = data.streams[stream];
    const signing = spec ? signingKeyOf(spec.auth, producer) : 'cannot';
    return signing === 'cannot' ? [] : [{ eventType, stream, signing }];
  });
}

function consumerPlan(name: string, raw: DeploymentData['consumers'][string], data: DeploymentData, problems: ConfigProblem[]): ConsumerPlan | undefined {
  const stream = data.streams[raw.stream];
  const path = `consumers.${name}`;
  if (!stream) problems.push({ path: `${path}.stream`, message: 'is not declared in streams' });
  if (raw.schedule === undefined && !raw.wakeUp) problems.push({ path, message: 'needs a schedule or wakeUp: true, or it never runs' });
  for (const producer of raw.publishesAs) {
    if (routesFor(data, producer).length === 0) {
      problems.push({ path: `${path}.publishesAs`, message: `producer "${producer}" holds no signing key for any routed stream` });
    }
  }
  for (const field of ['stream', 'group', 'consumer', 'keyTag', 'keys']) {
    if (field in raw.settings) problems.push({ path: `${path}.settings.${field}`, message: `is set on the consumer or its stream, not in settings` });
  }
  try {
    const config = parseConsumerConfig({
      ...raw.settings,
      stream: raw.stream,
      group: raw.group,
      consumer: raw.consumer ?? name,
      keyTag: stream?.keyTag,
      keys: stream?.keys,
    });
    return Object.freeze({
      name,
      config,
      schedule: raw.schedule,
      wakeUp: raw.wakeUp,
      mode: raw.mode,
      publishesAs: Object.freeze([...raw.publishesAs]),
      handler: raw.handler,
    });
  } catch (error) {
    if (errorCode(error) !== 'CONFIG_INVALID') throw error;
    const OWN_FIELDS = ['stream', 'group', 'consumer', 'keyTag', 'keys'];
    const settingsPath = (p: string) =>
      p === '' ? `${path}.settings` : OWN_FIELDS.includes(p.split('.')[0]!) ? `${path}.${p}` : `${path}.settings.${p}`;
    problems.push(...(error as ConfigError).problems.map((p) => ({ ...p, path: settingsPath(p.path) })));
    return undefined;
  }
}

function crossChecks(data: DeploymentData, consumers: Map<string, ConsumerPlan>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [eventType, stream] of Object.entries(data.routes)) {
    if (!data.streams[stream]) problems.push({ path: `routes.${eventType}`, message: `stream "${stream}" is not declared in streams` });
  }
  for (const [producer, spec] of Object.entries(data.publishApi?.producers ?? {})) {
    spec.eventTypes.forEach((eventType, i) => {
      const path = `publishApi.producers.${producer}.eventTypes.${i}`;
      if (!(eventType in data.routes)) problems.push({ path, message: `event type "${eventType}" has no route` });
      else if (routesFor(data, producer, [eventType]).length === 0) {
        problems.push({ path, message: `producer "${producer}" cannot sign for stream "${data.routes[eventType]}" (no live key of its own there)` });
      }
    });
  }
  if (data.trim) {
    for (const plan of consumers.values()) {
      if (plan.config.markerTtlSeconds > data.trim.dltRetentionSeconds) {
        problems.push({
          path: `consumers.${plan.name}.settings.markerTtlSeconds`,
          message: 'must not exceed trim.dltRetentionSeconds: a marker must never outlive its DLT record',
        });
      }
    }
  }
  problems.push(...postgresChecks(data, consumers));
  return problems;
}

/** An inbox row must outlive every way its event can arrive again (SPEC §7 retention). */
function postgresChecks(data: DeploymentData, consumers: Map<string, ConsumerPlan>): ConfigProblem[] {
  const postgres = data.postgres;
  if (!postgres) return [];
  const floors: Array<[number, string]> = [
    [data.trim?.dltRetentionSeconds ?? 0, 'trim.dltRetentionSeconds (a redriven entry must still find its inbox row)'],
    [data.publishApi?.dedupeWindowSeconds ?? 0, 'publishApi.dedupeWindowSeconds'],
    ...[...consumers.values()].map((plan): [number, string] => [Math.ceil(plan.config.minIdleMs / 1000), `consumers.${plan.name}.settings.minIdleMs`]),
  ];
  return floors
    .filter(([floor]) => postgres.inboxRetentionSeconds < floor)
    .map(([, what]) => ({ path: 'postgres.inboxRetentionSeconds', message: `must not be shorter than ${what}` }));
}

function secretsOf(data: DeploymentData, consumers: Map<string, ConsumerPlan>): DeploymentSecrets {
  const redis = [data.redis.tcp?.urlEnv, data.redis.rest?.urlEnv, data.redis.rest?.tokenEnv].filter((n): n is string => !!n);
  const signingEnvs = (producer: string) => routesFor(data, producer).flatMap((r) => (r.signing ? [r.signing.keyEnv] : []));
  const unique = (names: string[]) => Object.freeze([...new Set(names)].sort());
  const publishApi = unique(
    [
      ...Object.entries(data.publishApi?.producers ?? {}).flatMap(([producer, spec]) => [spec.tokenEnv, ...signingEnvs(producer)]),
      ...(data.publishApi?.dashboard ? [data.publishApi.dashboard.adminTokenEnv] : []),
    ],
  );
  const database = Object.freeze(data.postgres ? [data.postgres.urlEnv] : []);
  const publishing = [...new Set([...consumers.values()].flatMap((plan) => plan.publishesAs))];
  return Object.freeze({
    redis: Object.freeze(redis),
    publishApi,
    database,
    relay: unique([...database, ...publishing.flatMap(signingEnvs)]),
    consumer(name: string) {
      const plan = consumers.get(name);
      if (!plan) return [];
      return unique([...verificationEnvs(data.streams[plan.config.stream]!.auth), ...plan.publishesAs.flatMap(signingEnvs)]);
    },
  });
}

export function defineConfig(input: DeploymentInput): DeploymentConfig {
  const parsed = deploymentSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) throw new ConfigError('deployment config', problemsOf(parsed.error));
  const data = parsed.data;
  const problems: ConfigProblem[] = [];
  const consumers = new Map<string, ConsumerPlan>();
  for (const [name, raw] of Object.entries(data.consumers)) {
    const plan = consumerPlan(name, raw, data, problems);
    if (plan) consumers.set(name, plan);
  }
  problems.push(...crossChecks(data, consumers));
  if (problems.length > 0) throw new ConfigError('deployment config', problems);
  return Object.freeze({
    name: data.name,
    data,
    consumers,
    routesFor: (producer: string) => routesFor(data, producer),
    wakeUpTarget: <K extends WakeUpTarget['kind']>(kind: K) =>
      ([data.wakeUp ?? []].flat().find((target) => target.kind === kind) as Extract<WakeUpTarget, { kind: K }> | undefined),
    secrets: secretsOf(data, consumers),
  });
}
