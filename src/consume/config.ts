/**
 * Consumer configuration (SPEC §5.4): parsed once at construction with zod, failing with
 * every problem listed by field path. The parsed object is frozen; the caller's input is
 * never mutated.
 */
// zod/mini: the functional API tree-shakes; classic zod's methods keep its whole API (and ~8 ms of
// cold import) in every bundle. Same core, same checks, same messages.
import * as z from 'zod/mini';
import { problemsOf } from '../ground/config-problems';
import { ConfigError, type ConfigProblem } from '../ground/errors';
import { keyTagProblems } from '../entry/hash-tag';
import { deriveStreamKeys, derivedKeyProblems, isValidKeyName, type StreamKeys } from '../entry/keys';
import { IN_ENGLISH } from '../ground/zod-messages';
import { DEADLINE_OVERRUN_MS } from '../redis/deadline';
import { durabilitySchema, durabilityWaitMs } from '../redis/durability';
import {
  DEFAULT_RETRY_FACTOR,
  DEFAULT_RETRY_JITTER,
  DEFAULT_RETRY_MAX_MS,
  MAX_RETRY_DELAY_MS,
  MAX_RETRY_FACTOR,
  MIN_RETRY_FACTOR,
  type RetryPolicy,
} from './retry';

/** Most runs that may hold one flow key at once (config flow.limit). */
export const MAX_FLOW_LIMIT = 64;
/** Bounds of config rateLimit: at most this many starts per window, windows up to an hour. */
export const MAX_RATE_LIMIT = 1_000_000;
export const MAX_RATE_WINDOW_MS = 3_600_000;
/** A key closed longer than this is reported as stuck when the config names no flow.closedAlertMs (or 3 × minIdleMs, if longer). */
export const DEFAULT_CLOSED_ALERT_MS = 15 * 60_000;
const MAX_CLOSED_ALERT_MS = 7 * 24 * 3_600_000;

/** Worst case of one round, batch × handler timeout, is capped so shutdowns stay bounded. */
export const MAX_ROUND_WORK_MS = 3_600_000;
/** Below this much handler time after the settle reserve, a run does not start (run.ts). */
export const MIN_HANDLER_WINDOW_MS = 50;

/** A Redis key name (SPEC §3.4); shared by every config that names keys. */
export const keyName = z.string().check(z.refine(isValidKeyName, 'must be printable ASCII without spaces, 1..=256 bytes'));
/** A group or consumer name. */
export const memberName = z
  .string()
  .check(z.refine((s) => s.length > 0 && new TextEncoder().encode(s).length <= 128, 'must be 1..=128 bytes'));
const positiveInt = z.int().check(z.positive());

export const consumerConfigSchema = z.strictObject({
  stream: keyName,
  group: memberName,
  /** Stable per function/shard, or per run (e.g. the request id); see SPEC §5.2. */
  consumer: memberName,
  /** When set, every key must carry `{keyTag}` so all keys share one Cluster slot. */
  keyTag: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  keys: z.optional(
    z.strictObject({
      dlt: z.optional(keyName),
      markerPrefix: z.optional(keyName),
      cursor: z.optional(keyName),
      publishDedupePrefix: z.optional(keyName),
      /** Deferral not-before times of this group (SPEC §5.6); default `<stream>:defer:<group>`. */
      defer: z.optional(keyName),
      /** Flow leases of this group (SPEC §5.7); default `<stream>:flow:lease:<group>`. */
      flowLease: z.optional(keyName),
    }),
  ),
  /** Fresh entries read per round. */
  batch: z._default(z.int().check(z.minimum(1), z.maximum(10_000)), 100),
  /** Idle pending entries reclaimed per round (defaults to `batch`). */
  reclaimBatch: z.optional(z.int().check(z.minimum(1), z.maximum(10_000))),
  /** Continuous mode: longest wait for new entries between empty rounds. 0 would mean forever in Redis. */
  blockMs: z._default(z.int().check(z.minimum(1), z.maximum(60_000)), 1_000),
  handlerTimeoutMs: z._default(z.int().check(z.minimum(1), z.maximum(60_000)), 30_000),
  /** Entries idle this long are reclaimed from other consumers; must exceed runBudgetMs (+ DEADLINE_OVERRUN_MS). */
  minIdleMs: z._default(positiveInt, 300_000),
  /** Longest a run may hold entries: the platform's time limit. A run's deadline never exceeds start + this. */
  runBudgetMs: z._default(positiveInt, 60_000),
  /** Time kept back before the deadline for the settle round trip. */
  settleReserveMs: z._default(z.int().check(z.minimum(1), z.maximum(60_000)), 500),
  markerTtlSeconds: z._default(positiveInt, 7 * 24 * 3600),
  dltRetentionSeconds: z._default(positiveInt, 14 * 24 * 3600),
  /** Handlers running at once within a round; 1 handles entries strictly in order. */
  concurrency: z._default(z.int().check(z.minimum(1), z.maximum(1_024)), 1),
  /**
   * How continuous mode waits between empty rounds: `block` = a read of one entry that blocks
   * (`XREADGROUP … COUNT 1 BLOCK`, TCP only, on the port's blocking connection: an entry
   * appended meanwhile comes back in the reply that wakes the run), `sleep` = plain timer.
   * Default: block on TCP, sleep on REST and with `flow` (whose leases a blocking read would pass).
   */
  wait: z.optional(z.enum(['block', 'sleep'])),
  /** Reclaim cadence (SPEC §5.1): XAUTOCLAIM runs at least every this many rounds while fresh entries fill them. */
  reclaimEveryRounds: z._default(z.int().check(z.minimum(1), z.maximum(1_000)), 10),
  /**
   * Byte budget of the claim replies a run holds at once (SPEC §5.1), a bound: each claim may
   * return what the budget leaves beside the batch in hand, and claim.lua keeps it to that
   * (one entry larger than the budget is read alone). 4 MiB: peak memory is about three
   * budgets of reply buffers (the batch in hand, the one claimed beside it, the client's
   * parse buffer), and claims of 2 MiB cost no more CPU per entry than claims of 4 MiB.
   */
  maxRoundBytes: z._default(z.int().check(z.minimum(65_536), z.maximum(536_870_912)), 4 * 1024 * 1024),
  /** Where a newly created group starts: `0-0` replays history, `$` starts from now. */
  startFrom: z._default(z.enum(['0-0', '$']), '0-0'),
  /**
   * Each settle is followed, in its round trip, by WAITAOF / WAIT for the AOF and replicas asked
   * for. The acks happen either way: a wait that falls short is counted (`settledUnconfirmed`),
   * never undone. Refused over REST, and on a server without WAITAOF when it is involved.
   */
  durability: z.optional(durabilitySchema),
  /**
   * Flow control across the fleet (SPEC §5.7): an entry whose `flow_key` field names a key is
   * handled only under a lease on that key, held by at most `limit` runs of the group at once
   * (each run handles its entries of one key one at a time), so no more than `limit` handlers
   * of one key are ever in flight. An entry whose key is busy is parked, never handled or
   * acked, and comes back when a slot frees. A key's entries are admitted first in, first
   * out. Entries without the field flow as before. `false`: off, as when absent (saga
   * consumers turn it on when absent).
   */
  flow: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({
      limit: z._default(z.int().check(z.minimum(1), z.maximum(MAX_FLOW_LIMIT)), 1),
      /**
       * 'strict': a key whose earliest pending entry was retained (or left unsettled by a run
       * that ended or died) stays closed to every later entry of it until that one settles —
       * FIFO per key across the fleet, like SQS FIFO message groups. Needs limit 1.
       * 'none' (default): at most `limit` in flight per key, no order across runs.
       */
      order: z._default(z.enum(['none', 'strict']), 'none'),
      /**
       * Fair batches: one claim admits at most this many entries of one key; the rest wait
       * in the key's queue and the key takes its turn in the ready queue (first ready, first
       * served), so a burst on one key cannot fill every batch while other keys wait. Costs
       * read-ahead: the run reads past the burst, parking it in Redis (README "Fair batches").
       * Absent: no cap.
       */
      share: z.optional(z.int().check(z.minimum(1), z.maximum(10_000))),
      /**
       * A key closed behind its head (strict order) for longer than this, measured from the
       * head's id, is reported as stuck: the backlog line warns and counts it
       * (`flowClosedOverAge`, an AWS alarm), `backlog` prints a warning. Default: 15 min, or
       * 3 × minIdleMs if longer.
       */
      closedAlertMs: z.optional(z.int().check(z.minimum(1_000), z.maximum(MAX_CLOSED_ALERT_MS))),
      }),
    ]),
  ),
  /**
   * Rate limit across the fleet (SPEC §5.7): at most `limit` entries of this group start per
   * `perMs` window, over every run of the group, with bursts of up to `burst` (default:
   * `limit`) — GCRA on the Redis clock, in the claim script. Entries over the limit are not
   * claimed: they wait, unread or pending, and are never dead-lettered for it.
   */
  rateLimit: z.optional(
    z.strictObject({
      /**
       * 'flow': the limit applies to each flow key on its own (its own bucket, kept in the
       * key's lease state), and a handler's `Deferral` with retryAfterMs holds the key until
       * then. Absent: one bucket for the group. Needs `flow`.
       */
      key: z.optional(z.literal('flow')),
      limit: z.int().check(z.minimum(1), z.maximum(MAX_RATE_LIMIT)),
      perMs: z.int().check(z.minimum(1), z.maximum(MAX_RATE_WINDOW_MS)),
      burst: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_RATE_LIMIT))),
    }),
  ),
  /**
   * Retry backoff (SPEC §5.6): a retained entry is reclaimed no earlier than this wait after
   * its last delivery (retry.ts). Default: exponential from minIdleMs, ×2, up to 15 min.
   */
  retry: z.optional(
    z.strictObject({
      backoff: z._default(z.enum(['fixed', 'exponential']), 'exponential'),
      /** Default: minIdleMs (no entry is reclaimed sooner anyway). */
      baseMs: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_RETRY_DELAY_MS))),
      factor: z._default(z.number().check(z.minimum(MIN_RETRY_FACTOR), z.maximum(MAX_RETRY_FACTOR)), DEFAULT_RETRY_FACTOR),
      /** Default: 15 min, or baseMs when that is longer. */
      maxMs: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_RETRY_DELAY_MS))),
      jitter: z._default(z.number().check(z.minimum(0), z.maximum(1)), DEFAULT_RETRY_JITTER),
    }),
  ),
});

export type ConsumerConfigInput = z.input<typeof consumerConfigSchema>;

export interface ConsumerConfig extends Omit<z.output<typeof consumerConfigSchema>, 'reclaimBatch' | 'keys' | 'retry'> {
  readonly reclaimBatch: number;
  readonly keys: StreamKeys;
  readonly retry: RetryPolicy;
}

type RetryInput = z.output<typeof consumerConfigSchema>['retry'];

/** The retry policy with its defaults, which follow minIdleMs (see the schema). */
function resolveRetry(input: RetryInput, minIdleMs: number): RetryPolicy {
  const baseMs = input?.baseMs ?? minIdleMs;
  return Object.freeze({
    backoff: input?.backoff ?? 'exponential',
    baseMs,
    factor: input?.factor ?? DEFAULT_RETRY_FACTOR,
    maxMs: input?.maxMs ?? Math.max(DEFAULT_RETRY_MAX_MS, baseMs),
    jitter: input?.jitter ?? DEFAULT_RETRY_JITTER,
  });
}

/** A base below minIdleMs would never take effect, a cap below the base never lets the wait grow. */
function retryProblems(config: ConsumerConfig): ConfigProblem[] {
  const { retry, minIdleMs } = config;
  const problems: ConfigProblem[] = [];
  if (retry.baseMs < minIdleMs) {
    problems.push({ path: 'retry.baseMs', message: 'must be at least minIdleMs: no entry is reclaimed sooner than minIdleMs after its delivery' });
  }
  if (retry.maxMs < retry.baseMs) problems.push({ path: 'retry.maxMs', message: 'must be at least retry.baseMs (default minIdleMs)' });
  return problems;
}

/**
 * What cannot fit (SPEC §5.4), each naming its fields and the bound. Rejected: what is unsafe
 * or can never work. Accepted, because the run bounds it at run time and nothing breaks:
 * - handlerTimeoutMs longer than runBudgetMs − settleReserveMs: a handler's limit is
 *   min(handlerTimeoutMs, time left before the settle reserve) (§5.1 step 2), so a short run
 *   budget shortens it; the timeout is a cap, not a promise, and one config serves platforms
 *   with different budgets.
 * - blockMs ≥ runBudgetMs: the wait is cut at the settle reserve too.
 * - maxRoundBytes too small for a full batch: claim counts follow the byte budget (one entry
 *   larger than the budget is read alone); a batch that is never filled only limits.
 */
function crossFieldProblems(config: ConsumerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [...roundWorkProblems(config)];
  if (config.minIdleMs < config.runBudgetMs + DEADLINE_OVERRUN_MS) {
    problems.push({
      path: 'minIdleMs',
      message:
        `must exceed runBudgetMs by at least ${DEADLINE_OVERRUN_MS} ms (a run's last exchange with Redis, its final settle, ` +
        'may end that long after its deadline), or a live run could have its entries reclaimed by another',
    });
  }
  if (config.markerTtlSeconds > config.dltRetentionSeconds) {
    problems.push({
      path: 'markerTtlSeconds',
      message: 'must not exceed dltRetentionSeconds: a marker must never outlive the evidence it stands for',
    });
  }
  if (config.runBudgetMs - config.settleReserveMs < MIN_HANDLER_WINDOW_MS) {
    problems.push({
      path: 'settleReserveMs',
      message: `must leave at least ${MIN_HANDLER_WINDOW_MS} ms of runBudgetMs for handlers (runBudgetMs − settleReserveMs ≥ ${MIN_HANDLER_WINDOW_MS}), or every run is refused as starting too close to its deadline`,
    });
  }
  problems.push(...hashTagProblems(config.keys, config.keyTag), ...retryProblems(config));
  const flow = flowOf(config);
  if (flow?.order === 'strict' && flow.limit !== 1) {
    problems.push({
      path: 'flow.limit',
      message: `must be 1 with flow.order "strict" (got ${flow.limit}): two handlers of one key in flight at once could finish out of order`,
    });
  }
  if (flow?.closedAlertMs !== undefined && flow.order !== 'strict') {
    problems.push({ path: 'flow.closedAlertMs', message: 'needs flow.order "strict": only strict order closes a key behind its head' });
  }
  if (flow?.share !== undefined && flow.share >= config.batch) {
    problems.push({
      path: 'flow.share',
      message: `must be below batch (${config.batch}) to cap anything (got ${flow.share}): leave it unset for no cap`,
    });
  }
  if (config.rateLimit !== undefined) problems.push(...rateLimitProblems(config.rateLimit, config.wait));
  if (config.rateLimit?.key === 'flow' && flow === undefined) {
    problems.push({ path: 'rateLimit.key', message: '"flow" needs config flow: the limit is kept per flow key, under its lease' });
  }
  if (flow !== undefined && config.wait === 'block') {
    problems.push({
      path: 'wait',
      message: 'must be "sleep" with flow: a blocking read delivers an entry past the claim that takes its flow lease (leave it unset)',
    });
  }
  if (config.durability !== undefined && durabilityWaitMs(config.durability) >= config.settleReserveMs) {
    problems.push({
      path: 'durability.timeoutMs',
      message: `the durability waits (${durabilityWaitMs(config.durability)} ms at most) must end within settleReserveMs (${config.settleReserveMs} ms), the time a run keeps for its last settle: raise settleReserveMs or lower the timeout`,
    });
  }
  return problems;
}

/**
 * A round holds up to `batch` fresh and `reclaimBatch` reclaimed entries; each source is
 * held to the SPEC's hour of worst-case handler time (so a round's worst case is at most
 * two). The reclaim is checked only above `batch`: at or below it, the batch rule covers it.
 */
function roundWorkProblems(config: ConsumerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.batch * config.handlerTimeoutMs > MAX_ROUND_WORK_MS) {
    problems.push({ path: 'handlerTimeoutMs', message: `batch × handlerTimeoutMs must be ≤ ${MAX_ROUND_WORK_MS} ms (one hour)` });
  }
  if (config.reclaimBatch > config.batch && config.reclaimBatch * config.handlerTimeoutMs > MAX_ROUND_WORK_MS) {
    problems.push({
      path: 'reclaimBatch',
      message: `reclaimBatch × handlerTimeoutMs must be ≤ ${MAX_ROUND_WORK_MS} ms (one hour), as batch × handlerTimeoutMs: a round holds up to batch fresh and reclaimBatch reclaimed entries`,
    });
  }
  return problems;
}

const KEY_FIELDS: Array<[keyof StreamKeys, string]> = [
  ['stream', 'stream'],
  ['dlt', 'keys.dlt'],
  ['markerPrefix', 'keys.markerPrefix'],
  ['cursor', 'keys.cursor'],
  ['publishDedupePrefix', 'keys.publishDedupePrefix'],
  ['defer', 'keys.defer'],
  ['flowLease', 'keys.flowLease'],
];

/** With a key tag configured, every key must hash on exactly `{tag}` (SPEC §3.4). */
export function hashTagProblems(keys: StreamKeys, keyTag: string | undefined): ConfigProblem[] {
  return keyTagProblems(keyTag, KEY_FIELDS.map(([field, path]) => [path, keys[field]] as const));
}

/** Configs produced by parseConsumerConfig: passing one again skips re-validation. */
const parsedConfigs = new WeakSet<ConsumerConfig>();

/** The config came from parseConsumerConfig (it is frozen, its keys derived). */
export function isParsedConfig(input: unknown): input is ConsumerConfig {
  return typeof input === 'object' && input !== null && parsedConfigs.has(input as ConsumerConfig);
}

export function parseConsumerConfig(input: unknown): ConsumerConfig {
  if (isParsedConfig(input)) return input;
  const parsed = consumerConfigSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) throw new ConfigError('consumer config', problemsOf(parsed.error));
  const { keys: overrides, reclaimBatch, retry, ...rest } = parsed.data;
  const config: ConsumerConfig = {
    ...rest,
    reclaimBatch: reclaimBatch ?? rest.batch,
    keys: Object.freeze(deriveStreamKeys(rest.stream, rest.group, overrides)),
    retry: resolveRetry(retry, rest.minIdleMs),
  };
  // Derived key names follow the rule explicit ones do (SPEC §3.4), blamed on the field that caused them.
  const problems = [...derivedKeyProblems(rest.stream, rest.group, overrides), ...crossFieldProblems(config)];
  if (problems.length > 0) throw new ConfigError('consumer config', problems);
  parsedConfigs.add(Object.freeze(config));
  return config;
}

function rateLimitProblems(rate: NonNullable<ConsumerConfig['rateLimit']>, wait: ConsumerConfig['wait']): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (rate.burst !== undefined && rate.burst > rate.limit) {
    problems.push({ path: 'rateLimit.burst', message: `must be at most rateLimit.limit (${rate.limit}): a burst is a share of one window` });
  }
  if (rate.perMs * 100 < rate.limit) {
    problems.push({ path: 'rateLimit.limit', message: `must be at most 100 per ms of rateLimit.perMs (${rate.perMs} ms): the Redis clock's ms, as a double near 1.8e12, cannot space finer starts exactly` });
  }
  if (wait === 'block') {
    problems.push({ path: 'wait', message: 'must be "sleep" with rateLimit: a blocking read delivers an entry past the claim that counts it (leave it unset)' });
  }
  return problems;
}

/** The rate limit as the claim script applies it: ms between starts (T) and the burst's tolerance (τ = (burst − 1) × T). */
export function rateSpacing(rate: NonNullable<ConsumerConfig['rateLimit']>): { readonly intervalMs: number; readonly toleranceMs: number } {
  const intervalMs = rate.perMs / rate.limit;
  return { intervalMs, toleranceMs: ((rate.burst ?? rate.limit) - 1) * intervalMs };
}

/** The config's flow control, or undefined when it is off (absent or `false`). */
export function flowOf(config: Pick<ConsumerConfig, 'flow'>): Exclude<ConsumerConfig['flow'], false> {
  return config.flow === false ? undefined : config.flow;
}

/**
 * The age past which a key closed behind its head is reported as stuck: undefined where no key
 * can close (flow off, or not strict). A config that names no flow gets the default, since a
 * saga consumer built from it runs strict order (SAGA_FLOW); on any other its count stays 0.
 */
export function closedAlertMsOf(config: Pick<ConsumerConfig, 'flow' | 'minIdleMs'>): number | undefined {
  const fallback = Math.max(DEFAULT_CLOSED_ALERT_MS, 3 * config.minIdleMs);
  if (config.flow === undefined) return fallback;
  return config.flow === false || config.flow.order !== 'strict' ? undefined : (config.flow.closedAlertMs ?? fallback);
}

/** A parsed config with some fields changed, parsed again (its key names kept as they were). */
export function withChanges(config: ConsumerConfig, changes: Partial<ConsumerConfigInput>): ConsumerConfig {
  const { keys, ...rest } = config;
  const overrides = { dlt: keys.dlt, markerPrefix: keys.markerPrefix, cursor: keys.cursor, publishDedupePrefix: keys.publishDedupePrefix, defer: keys.defer, flowLease: keys.flowLease };
  return parseConsumerConfig({ ...rest, keys: overrides, ...changes });
}

/** The same config read by another consumer name (e.g. a per-run name from a request id). */
export function withConsumerName(config: ConsumerConfig, consumer: string): ConsumerConfig {
  return withChanges(config, { consumer });
}
