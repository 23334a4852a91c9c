/**
 * Publisher configuration (SPEC §5.4, §6.1): validated once, every problem listed, and
 * turned into an immutable event_type → route map. A publisher signs, so it takes one key per
 * route and refuses a verification keyring.
 */
import * as z from 'zod/mini';
import { checkStreamAuth, type StreamAuth } from '../auth/modes';
import { keyName } from '../consume/config';
import { problemsOf } from '../ground/config-problems';
import { ConfigError, type ConfigProblem } from '../ground/errors';
import { FrozenMap } from '../ground/frozen-map';
import { hashTagOf, keyTagProblems } from '../entry/hash-tag';
import { deriveStreamKeys } from '../entry/keys';
import { IN_ENGLISH } from '../ground/zod-messages';
import { MAX_SCHEDULE_DELAY_MS } from '../schedule/due-time';
import { durabilitySchema, durabilityTransportProblems, durabilityWaitMs, type Durability } from '../redis/durability';
import type { Transport } from '../redis/port';

/** SPEC §6.1 default: long enough to cover an outbox's retry backoff. */
export const DEFAULT_DEDUPE_WINDOW_SECONDS = 600;
export const MAX_DEDUPE_WINDOW_SECONDS = 7 * 24 * 3600;
/** A publish that has no reply by then fails as transient instead of hanging its caller. */
export const DEFAULT_PUBLISH_TIMEOUT_MS = 5_000;
/** Largest batch sent in one round trip; bounds the memory of one request. */
export const MAX_PUBLISH_BATCH = 10_000;


/** Built on first use (the first publisher), not when the module is imported. */
export const publisherConfigSchema = z.lazy(() => {
  const routeSchema = z.union([
    keyName,
    z.strictObject({ stream: keyName, publishDedupePrefix: z.optional(keyName), auth: z.optional(z.unknown()) }),
  ]);

  return z.strictObject({
    /** event_type → stream (or {stream, publishDedupePrefix?, auth?}). */
    routes: z
      .record(z.string().check(z.minLength(1), z.maxLength(256)), routeSchema)
      .check(z.refine((routes) => Object.keys(routes).length > 0, 'must hold at least one route')),
    /** Default auth of every route without its own: `hmac` or `exclusive-stream`. */
    auth: z.optional(z.unknown()),
    /** 0 turns the dedupe window off: each publish appends. */
    dedupeWindowSeconds: z._default(z.int().check(z.minimum(0), z.maximum(MAX_DEDUPE_WINDOW_SECONDS)), DEFAULT_DEDUPE_WINDOW_SECONDS),
    /** When set, every stream and dedupe prefix must carry `{keyTag}`. */
    keyTag: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    timeoutMs: z._default(z.int().check(z.minimum(1), z.maximum(60_000)), DEFAULT_PUBLISH_TIMEOUT_MS),
    /** Longest delay of a scheduled publish (deliverAt / delayMs), ms; at most 365 days. */
    maxDelayMs: z._default(z.int().check(z.minimum(1), z.maximum(MAX_SCHEDULE_DELAY_MS)), MAX_SCHEDULE_DELAY_MS),
    /**
     * Success means the append also reached the primary's AOF and/or replicas (WAITAOF / WAIT,
     * sent right after it in the same round trip); falling short is a transient failure.
     */
    durability: z.optional(durabilitySchema),
  });
});

export type PublisherConfigInput = z.input<typeof publisherConfigSchema>;

export interface PublishRoute {
  readonly eventType: string;
  readonly stream: string;
  readonly dedupePrefix: string;
  readonly auth: StreamAuth;
}

export interface PublisherConfig {
  readonly routes: ReadonlyMap<string, PublishRoute>;
  readonly dedupeWindowSeconds: number;
  readonly timeoutMs: number;
  /** Longest delay a scheduled publish may ask for, ms. */
  readonly maxDelayMs: number;
  readonly durability: Durability | undefined;
}

/** The durability waits must fit the publish's own time limit, or every slow wait fails as a timeout. */
function durabilityProblems(durability: Durability | undefined, timeoutMs: number, transport: Transport): ConfigProblem[] {
  const problems = durabilityTransportProblems(durability, transport, 'durability');
  if (durability !== undefined && durabilityWaitMs(durability) >= timeoutMs) {
    problems.push({
      path: 'durability.timeoutMs',
      message: `the durability waits (${durabilityWaitMs(durability)} ms at most) must end before the publish's timeoutMs (${timeoutMs} ms): lower it or raise timeoutMs`,
    });
  }
  return problems;
}

function slotProblems(route: PublishRoute, path: string, keyTag: string | undefined, cluster: boolean, dedupe: boolean): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (keyTag !== undefined) {
    const keys: Array<readonly [string, string]> = [[path, route.stream]];
    if (dedupe) keys.push([`${path}.publishDedupePrefix`, route.dedupePrefix]);
    problems.push(...keyTagProblems(keyTag, keys));
  } else if (cluster && dedupe && (hashTagOf(route.stream) === route.stream || hashTagOf(route.dedupePrefix) !== hashTagOf(route.stream))) {
    problems.push({
      path,
      message: 'on Redis Cluster the stream needs a hash tag (e.g. "orders:{o}") shared by its dedupe records, which one script writes with it',
    });
  }
  return problems;
}

export function parsePublisherConfig(input: unknown, options: { cluster: boolean; transport?: Transport }): PublisherConfig {
  const parsed = publisherConfigSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) throw new ConfigError('publisher config', problemsOf(parsed.error));
  const { routes: routeInputs, auth: defaultAuth, dedupeWindowSeconds, keyTag, timeoutMs, maxDelayMs, durability } = parsed.data;
  const problems: ConfigProblem[] = durabilityProblems(durability, timeoutMs, options.transport ?? 'tcp');
  const routes = new Map<string, PublishRoute>();
  for (const [eventType, input] of Object.entries(routeInputs)) {
    const path = `routes.${eventType}`;
    const spec = typeof input === 'string' ? { stream: input } : input;
    const authInput = 'auth' in spec && spec.auth !== undefined ? spec.auth : defaultAuth;
    const authPath = authInput === defaultAuth ? 'auth' : `${path}.auth`;
    if (authInput === undefined) {
      problems.push({ path: authPath, message: 'required: give the route an auth or the publisher a default auth' });
      continue;
    }
    const checked = checkStreamAuth(authInput, 'publisher', authPath);
    if (!checked.auth) {
      // The default auth is reported once, not once per route using it.
      if (!problems.some((p) => p.path.startsWith(authPath))) problems.push(...checked.problems);
      continue;
    }
    const keys = deriveStreamKeys(spec.stream, '', { publishDedupePrefix: 'publishDedupePrefix' in spec ? spec.publishDedupePrefix : undefined });
    const route: PublishRoute = Object.freeze({ eventType, stream: spec.stream, dedupePrefix: keys.publishDedupePrefix, auth: checked.auth });
    problems.push(...slotProblems(route, path, keyTag, options.cluster, dedupeWindowSeconds > 0));
    routes.set(eventType, route);
  }
  if (problems.length > 0) throw new ConfigError('publisher config', problems);
  // FrozenMap, not a frozen Map: Object.freeze does not stop Map#set from redirecting publishes.
  return Object.freeze({ routes: new FrozenMap(routes), dedupeWindowSeconds, timeoutMs, maxDelayMs, durability: durability && Object.freeze(durability) });
}
