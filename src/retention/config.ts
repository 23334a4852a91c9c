/**
 * Retention configuration for one source stream (SPEC §7): how long dead-letter evidence is
 * kept, and when idle empty consumers are reaped. Parsed once with zod, every problem listed
 * by field path, never echoing values; the result is frozen.
 */
import * as z from 'zod/mini';
import { keyName, memberName } from '../consume/config';
import { problemsOf } from '../ground/config-problems';
import { ConfigError, type ConfigProblem } from '../ground/errors';
import { keyTagProblems } from '../entry/hash-tag';
import { deriveStreamKeys, derivedDltProblems } from '../entry/keys';
import { IN_ENGLISH } from '../ground/zod-messages';

const DAY_SECONDS = 24 * 3600;
/** Redis's own default LIMIT for `XTRIM ~` (100 × stream-node-max-entries). */
export const DEFAULT_TRIM_LIMIT = 10_000;

/**
 * Most entries one safe-trim call removes from a stream longer than this (XTRIM MINID ~
 * LIMIT): bounds how long one call blocks Redis on a large backlog. At least 100, Redis's
 * default stream-node-max-entries: approximate trimming frees whole nodes only, and a
 * limit under the node size frees nothing. Streams this short or shorter trim exactly.
 * A builder, shared with the deployment config's `trim.trimLimit`.
 */
export const trimLimitSchema = () => z._default(z.int().check(z.minimum(100), z.maximum(1_000_000)), DEFAULT_TRIM_LIMIT);

/** Built on first use (a trim run), not when the module is imported. */
export const retentionConfigSchema = z.lazy(() =>
  z.strictObject({
    stream: keyName,
    /** When set, the stream and DLT must both carry `{keyTag}` (one Cluster slot). */
    keyTag: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    keys: z.optional(z.strictObject({ dlt: z.optional(keyName) })),
    /** Dead-letter records older than this are trimmed. */
    dltRetentionSeconds: z._default(z.int().check(z.positive()), 14 * DAY_SECONDS),
    /**
     * The longest marker TTL any consumer of this stream uses. A marker must never outlive
     * the DLT record it stands for, so the window may not be shorter.
     */
    markerTtlSeconds: z._default(z.int().check(z.positive()), 7 * DAY_SECONDS),
    trimLimit: trimLimitSchema(),
    reaper: z.prefault(
      z.strictObject({
        /** Consumers with zero pending idle longer than this are deleted. */
        idleMs: z._default(z.int().check(z.positive()), DAY_SECONDS * 1000),
        /** At most this many deletions per run, so one run stays short. */
        maxPerRun: z._default(z.int().check(z.minimum(1), z.maximum(100_000)), 1_000),
        /** Groups to reap; omitted = every group on the stream. */
        groups: z.optional(z.array(memberName).check(z.minLength(1))),
      }),
      {},
    ),
  }),
);

export type RetentionConfigInput = z.input<typeof retentionConfigSchema>;

export interface RetentionConfig {
  readonly stream: string;
  readonly dlt: string;
  readonly dltRetentionSeconds: number;
  readonly markerTtlSeconds: number;
  readonly trimLimit: number;
  readonly reaper: {
    readonly idleMs: number;
    readonly maxPerRun: number;
    readonly groups: readonly string[] | undefined;
  };
}

function crossFieldProblems(config: RetentionConfig, keyTag: string | undefined): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.dltRetentionSeconds < config.markerTtlSeconds) {
    problems.push({
      path: 'dltRetentionSeconds',
      message: 'must not be shorter than markerTtlSeconds: a marker must never outlive the evidence it stands for',
    });
  }
  problems.push(...keyTagProblems(keyTag, [['stream', config.stream], ['keys.dlt', config.dlt]]));
  return problems;
}

export function parseRetentionConfig(input: unknown): RetentionConfig {
  const parsed = retentionConfigSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) throw new ConfigError('retention config', problemsOf(parsed.error));
  const { stream, keyTag, keys, reaper, dltRetentionSeconds, markerTtlSeconds, trimLimit } = parsed.data;
  const config: RetentionConfig = {
    stream,
    // The DLT name rule lives in keys.ts; retention has no group, and the cursor is unused.
    dlt: keys?.dlt ?? deriveStreamKeys(stream, '').dlt,
    dltRetentionSeconds,
    markerTtlSeconds,
    trimLimit,
    reaper: Object.freeze({ idleMs: reaper.idleMs, maxPerRun: reaper.maxPerRun, groups: reaper.groups && Object.freeze([...reaper.groups]) }),
  };
  const problems = [...derivedDltProblems(stream, { dlt: keys?.dlt }), ...crossFieldProblems(config, keyTag)];
  if (problems.length > 0) throw new ConfigError('retention config', problems);
  return Object.freeze(config);
}
