/**
 * How much a run's next claim asks for (SPEC §5.1): no more entries than the time left
 * before the settle reserve can cover at the handling speed observed so far in this run
 * ((a): nothing at all once not even one entry and a round trip fit), and no more than the
 * byte budget allows at the entry size observed so far ("Byte budget"), so a stream of
 * large entries never puts a huge reply in flight. Until an entry was seen, entries are
 * assumed to be ASSUMED_ENTRY_BYTES large; until a round was handled, time does not limit.
 */
import type { ClaimPlan } from './claim';
import type { ConsumerConfig } from './config';

/** Entry size assumed before the first claim returned any entry. */
export const ASSUMED_ENTRY_BYTES = 64 * 1024;

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
  #entryBytes: number | undefined;

  constructor(private readonly config: ConsumerConfig) {}

  /** Entries one claim reply may carry under the byte budget (at least 1). */
  byteCap(): number {
    return Math.max(1, Math.floor(this.config.maxRoundBytes / (this.#entryBytes ?? ASSUMED_ENTRY_BYTES)));
  }

  /** Entries the next claim may take with `timeLeftMs` of handling time left (by bytes and time); 0 = none. */
  limit(timeLeftMs: number): number {
    if (timeLeftMs <= 0) return 0;
    const byBytes = this.byteCap();
    if (this.#perEntryMs === undefined) return byBytes;
    const byTime = Math.floor((timeLeftMs - (this.#exchangeMs ?? 0)) / Math.max(this.#perEntryMs, 0.001));
    return Math.max(0, Math.min(byBytes, byTime));
  }

  /** The next claim's plan, or undefined when the time left cannot cover one more entry. */
  plan(timeLeftMs: number, reclaim: boolean): ClaimPlan | undefined {
    const limit = this.limit(timeLeftMs);
    if (limit === 0) return undefined;
    return { fresh: Math.min(this.config.batch, limit), reclaim: reclaim ? Math.min(this.config.reclaimBatch, limit) : 0 };
  }

  observeHandling(entries: number, elapsedMs: number): void {
    if (entries > 0) this.#perEntryMs = blend(this.#perEntryMs, elapsedMs / entries);
  }

  observeExchange(elapsedMs: number): void {
    this.#exchangeMs = blend(this.#exchangeMs, elapsedMs);
  }

  observeEntries(count: number, bytes: number): void {
    if (count > 0) this.#entryBytes = blend(this.#entryBytes, bytes / count);
  }
}
