/**
 * How much a run's next claim asks for (SPEC §5.1 (a)): no more entries than the time left
 * before the settle reserve can cover at the handling speed observed so far in this run, and
 * nothing at all once not even one entry and a round trip fit. The first claim of a run
 * has no observation yet and asks for a full batch.
 */
import type { ClaimPlan } from './claim';
import type { ConsumerConfig } from './config';

/** Weight of the newest observation in the moving averages: recent rounds matter most. */
const NEWEST_WEIGHT = 0.5;

function blend(previous: number | undefined, observed: number): number {
  return previous === undefined ? observed : previous + NEWEST_WEIGHT * (observed - previous);
}

export class RoundSizer {
  /** Wall-clock handling time per entry (concurrency included), ms. */
  #perEntryMs: number | undefined;
  /** One exchange with Redis, ms. */
  #exchangeMs: number | undefined;

  constructor(private readonly config: ConsumerConfig) {}

  /** Fresh entries the next claim may ask for with `timeLeftMs` of handling time left; 0 = do not claim. */
  freshCount(timeLeftMs: number): number {
    const { batch } = this.config;
    if (timeLeftMs <= 0) return 0;
    if (this.#perEntryMs === undefined) return batch;
    const byTime = Math.floor((timeLeftMs - (this.#exchangeMs ?? 0)) / Math.max(this.#perEntryMs, 0.001));
    return Math.max(0, Math.min(batch, byTime));
  }

  /** The next claim's plan, or undefined when the time left cannot cover one more entry. */
  plan(timeLeftMs: number, reclaim: boolean): ClaimPlan | undefined {
    const fresh = this.freshCount(timeLeftMs);
    if (fresh === 0) return undefined;
    return { fresh, reclaim: reclaim ? Math.min(this.config.reclaimBatch, fresh) : 0 };
  }

  observeHandling(entries: number, elapsedMs: number): void {
    if (entries > 0) this.#perEntryMs = blend(this.#perEntryMs, elapsedMs / entries);
  }

  observeExchange(elapsedMs: number): void {
    this.#exchangeMs = blend(this.#exchangeMs, elapsedMs);
  }
}
