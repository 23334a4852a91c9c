/**
 * The deployment config (`defineConfig`): one typed, validated description shared by every
 * entry point — Redis endpoints, streams and how they authenticate, event routes, consumers
 * with their schedules, the publish API's producers, and retention. Secrets appear only as
 * the NAMES of environment variables; their values are read at run time (secrets.ts).
 */
import * as z from 'zod/mini';
import { consumerConfigSchema, keyName } from '../consume/config';
import { DEFAULT_RELAY_BATCH, MAX_RELAY_BATCH } from '../postgres/relay';
import { tablesSchema } from '../postgres/tables';
import type { ConsumerFactory } from './consumers';
import { scheduleProblem } from './schedule';
import { trimLimitSchema } from '../retention/config';
import { durabilitySchema } from '../redis/durability';

/** Default of `publishApi.dashboard.idleRecordSeconds` (deployment/run-history.ts). */
export const IDLE_RECORD_SECONDS = 300;

const envName = z.string().check(z.regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'must be an environment variable name (A-Z, 0-9, _)'));
const identity = z.string().check(z.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1..=128 of A-Z a-z 0-9 . _ : -'));
const keyId = z.string().check(z.regex(/^[\x21-\x7e]{1,128}$/, 'must be 1..=128 printable ASCII characters without spaces'));
const eventType = z.string().check(z.regex(/^[A-Za-z0-9._:-]{1,256}$/, 'must be 1..=256 of A-Z a-z 0-9 . _ : -'));
/** A 5-field cron schedule (UTC) that every platform runs on the same instants (schedule.ts). */
const cron = z.string().check(
  z.superRefine((text, ctx) => {
    const problem = scheduleProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: `must be a 5-field cron schedule: ${problem}` });
  }),
);

export const streamAuthRefSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('hmac'), keyId, keyEnv: envName, producer: identity }),
  z.strictObject({
    mode: z.literal('hmac-keyring'),
    keys: z
      .record(keyId, z.strictObject({ producer: identity, keyEnv: envName, retired: z._default(z.boolean(), false) }))
      .check(z.refine((keys) => Object.keys(keys).length > 0, 'must hold at least one key')),
  }),
  z.strictObject({ mode: z.literal('exclusive-stream'), producer: identity }),
]);

const factory = z.custom<ConsumerFactory>(
  (value) => typeof value === 'object' && value !== null && typeof (value as ConsumerFactory).build === 'function',
  'must be a consumer factory (commandConsumer, capabilityConsumer, resultConsumer or entryConsumer)',
);

const wakeUpTarget = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('sqs'), queueUrlEnv: envName }),
  z.strictObject({ kind: z.literal('cloudflare-queue'), binding: z.string().check(z.regex(/^[A-Z_][A-Z0-9_]*$/)) }),
]);

export type WakeUpTarget = z.output<typeof wakeUpTarget>;

export const deploymentSchema = z.strictObject({
  /** Prefix of every cloud resource name. */
  name: z.string().check(z.regex(/^[a-z][a-z0-9-]{0,30}$/, 'must be lowercase letters, digits and -, starting with a letter, ≤ 31 chars')),
  redis: z
    .strictObject({
      tcp: z.optional(z.strictObject({ urlEnv: z._default(envName, 'REDIS_URL'), cluster: z._default(z.boolean(), false) })),
      rest: z.optional(
        z.strictObject({ urlEnv: z._default(envName, 'UPSTASH_REDIS_REST_URL'), tokenEnv: z._default(envName, 'UPSTASH_REDIS_REST_TOKEN') }),
      ),
    })
    .check(z.refine((r) => r.tcp !== undefined || r.rest !== undefined, 'needs a tcp or a rest endpoint')),
  streams: z.record(
    keyName,
    z.strictObject({
      auth: streamAuthRefSchema,
      keyTag: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
      keys: consumerConfigSchema.shape.keys,
    }),
  ),
  /** event_type → stream, for every publisher of this deployment. */
  routes: z.record(eventType, keyName),
  consumers: z.record(
    z.string().check(z.regex(/^[a-z][a-z0-9-]{0,40}$/, 'must be lowercase letters, digits and -, starting with a letter')),
    z.strictObject({
      stream: keyName,
      group: z.string().check(z.minLength(1), z.maxLength(128)),
      /** Stable consumer name; defaults to the consumer's key in this map. */
      consumer: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
      /** Poll on this cron schedule. */
      schedule: z.optional(cron),
      /** Also poll when a wake-up message arrives (sent after a publish). */
      wakeUp: z._default(z.boolean(), false),
      mode: z._default(z.enum(['drain', 'continuous']), 'drain'),
      /**
       * Consumer budgets (see the consumer config table). Checked field by field when the
       * consumer is planned, so their problems are listed together with cross-references.
       */
      settings: z._default(z.record(z.string(), z.unknown()), {}),
      /** Producer identities this consumer's handler publishes as (their signing keys are loaded). */
      publishesAs: z._default(z.array(identity), []),
      handler: factory,
    }),
  ),
  publishApi: z.optional(
    z.strictObject({
      producers: z.record(identity, z.strictObject({ tokenEnv: envName, eventTypes: z.array(eventType).check(z.minLength(1)) })),
      bodyLimitBytes: z._default(z.int().check(z.minimum(1), z.maximum(10 * 1024 * 1024)), 1024 * 1024),
      maxBatch: z._default(z.int().check(z.minimum(1), z.maximum(500)), 500),
      /**
       * At least 1: a batch is one pipeline, not a transaction, so a batch that failed part-way
       * is answered 503 "retry it" — safe only because the window turns the retry's repeats
       * into duplicates instead of second appends.
       */
      dedupeWindowSeconds: z._default(z.int().check(z.minimum(1), z.maximum(7 * 24 * 3600)), 600),
      /**
       * Every publisher of the deployment (the API's, handlers' follow-ups, the outbox relay)
       * reports success only once the append reached the AOF / replicas asked for (WAITAOF /
       * WAIT); refused over REST, and on a server without WAITAOF when it is involved.
       */
      durability: z.optional(durabilitySchema),
      /**
       * The ops dashboard at `/ops` (off when absent): its admin token's variable, a secret of
       * its own (never a producer token). Enabling it also makes runs record the dashboard's
       * history in Redis: every run that did something, an idle one at most once per
       * `idleRecordSeconds` per process (0: every idle run too; each record is one command).
       */
      dashboard: z.optional(
        z.strictObject({ adminTokenEnv: envName, idleRecordSeconds: z._default(z.int().check(z.minimum(0), z.maximum(86_400)), IDLE_RECORD_SECONDS) }),
      ),
    }),
  ),
  trim: z.optional(
    z.strictObject({
      schedule: cron,
      dltRetentionSeconds: z._default(z.int().check(z.positive()), 14 * 24 * 3600),
      reaperIdleMs: z._default(z.int().check(z.positive()), 24 * 3600 * 1000),
      /** Most entries one safe-trim call removes from a long stream (see RetentionConfig.trimLimit). */
      trimLimit: trimLimitSchema(),
    }),
  ),
  /**
   * The Postgres inbox/outbox (saga-streams/postgres): the connection string's variable, the
   * table names, the relay job (publishes the outbox; also prunes old inbox and sent rows).
   */
  postgres: z.optional(
    z.strictObject({
      urlEnv: z._default(envName, 'DATABASE_URL'),
      tables: z._default(tablesSchema, { schema: 'public', inbox: 'saga_inbox', outbox: 'saga_outbox', migrations: 'saga_migrations' }),
      relay: z.optional(
        z.strictObject({ schedule: cron, batch: z._default(z.int().check(z.minimum(1), z.maximum(MAX_RELAY_BATCH)), DEFAULT_RELAY_BATCH) }),
      ),
      /** Inbox rows must outlive every redelivery: ≥ trim.dltRetentionSeconds and the dedupe window. */
      inboxRetentionSeconds: z._default(z.int().check(z.positive()), 30 * 24 * 3600),
      sentRetentionSeconds: z._default(z.int().check(z.positive()), 7 * 24 * 3600),
    }),
  ),
  /**
   * Where publishes send a wake-up so wake-up consumers need not wait for their next tick:
   * one target, or one per platform (each entry point uses the target of its own kind).
   */
  wakeUp: z.optional(z.union([wakeUpTarget, z.array(wakeUpTarget).check(z.minLength(1))])),
});

export type DeploymentInput = z.input<typeof deploymentSchema>;
export type DeploymentData = z.output<typeof deploymentSchema>;
export type StreamAuthRef = z.output<typeof streamAuthRefSchema>;
