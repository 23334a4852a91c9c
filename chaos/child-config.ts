/** What the harness tells one poll process (argv JSON); the HMAC key travels in the environment. */
export type RedisTarget =
  | { readonly kind: 'standalone'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: ReadonlyArray<{ host: string; port: number }> };

/**
 * What a handler does on delivery n (plan[n - 1]); past the plan's end it commits.
 * `commit` commits; the others never commit on that delivery, except `busy`, which
 * blocks the event loop past its timeout and then commits (its verdict is late).
 */
export const HANDLER_ACTIONS = ['commit', 'throw', 'defer', 'timeout', 'busy', 'uninspectable', 'revoked', 'bad-return', 'reject'] as const;
export type HandlerAction = (typeof HANDLER_ACTIONS)[number];

export interface ChildSettings {
  readonly batch: number;
  readonly handlerTimeoutMs: number;
  readonly runBudgetMs: number;
  readonly minIdleMs: number;
  readonly settleReserveMs: number;
  readonly concurrency: number;
  readonly blockMs: number;
  /**
   * Retry backoff (SPEC §5.6), capped so that an entry failing five times still drains within
   * the bounded run's wait (the default, exponential up to 15 min, would outlast it).
   */
  readonly retry?: { readonly maxMs: number };
  /** Flow leases (issue 27): at most `limit` handlers of one flow key in flight, fleet-wide (I9); strict order (I10). */
  readonly flow?: { readonly limit: number; readonly order?: 'none' | 'strict' };
}

export interface ChildConfig {
  readonly redis: RedisTarget;
  /** The same Redis without the fault proxy: the early-ack probe's own connection. */
  readonly probe: RedisTarget;
  readonly stream: string;
  readonly group: string;
  /** Consumer names are `<consumer>-<run>` when perRunConsumer, else `<consumer>`. */
  readonly consumer: string;
  readonly perRunConsumer: boolean;
  readonly ledgerFile: string;
  readonly ledgerSync: 'write' | 'fsync';
  readonly keyId: string;
  readonly producer: string;
  readonly mode: 'drain' | 'continuous';
  /** Pause between runs, ms (drain runs end when the stream is drained). */
  readonly pauseMs: number;
  /** Extra handler latency per commit, ms (a lagging group). */
  readonly commitDelayMs: number;
  /** A retaining group: entries whose payload n is a multiple of this defer their first `retainDeliveries` deliveries. */
  readonly retainEvery: number;
  readonly retainDeliveries: number;
  readonly settings: ChildSettings;
  /** Scenario 8: commit through a Postgres inbox (effect + inbox row in one transaction). */
  readonly inbox?: { readonly url: string; readonly tables: { readonly inbox: string; readonly effects: string } };
}

/** One line per run on the child's stdout, prefixed `RUN `. */
export interface RunLine {
  readonly pid: number;
  readonly consumer: string;
  readonly startedAt: number;
  readonly deadline: number;
  readonly endedAt: number;
  readonly error?: string;
  readonly acked?: number;
  readonly deadLettered?: number;
  readonly retained?: number;
  readonly deletedPending?: number;
}

/**
 * Printed (prefixed `EARLY_ACK `) when a handler, still inside its own time limit and not
 * yet returned, finds its entry already gone from the group's PEL: acked before commit (I2).
 */
export interface EarlyAckLine {
  readonly pid: number;
  readonly group: string;
  readonly entryId: string;
  /** The group's last-delivered id at the probe: above it, Redis forgot the delivery (no ack happened). */
  readonly lastDelivered?: string;
}

/** Printed before each run starts, prefixed `START `, so a run that never ends is seen. */
export interface StartLine {
  readonly pid: number;
  readonly startedAt: number;
  readonly deadline: number;
}

export const HMAC_KEY_ENV = 'CHAOS_HMAC_KEY';
