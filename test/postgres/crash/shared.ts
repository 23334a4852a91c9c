/** What the crash run's parent (crash-run.ts) and its poll processes (child.ts) agree on. */

export interface ChildConfig {
  readonly redisUrl: string;
  readonly stream: string;
  readonly group: string;
  readonly database: { readonly kind: 'pg'; readonly url: string } | { readonly kind: 'pglite'; readonly dataDir: string };
  readonly schema: string;
  /** Chance, per committed event, of dying before its ack. */
  readonly selfKillProbability: number;
}

export const CHAOS_CONSUMER = 'chaos';
/** A dead process's entries become reclaimable this long after their delivery. */
export const CHILD_BUDGETS = { batch: 50, handlerTimeoutMs: 1_000, runBudgetMs: 1_200, minIdleMs: 1_700, settleReserveMs: 100 } as const;
