/**
 * How much a run's next claim asks for (SPEC §5.1): no more entries than the time left
 * before the settle reserve can cover at the handling speed observed so far in this run
 * ((a): nothing at all once not even one entry and a round trip fit), and no more than the
 * byte budget allows at the entry size observed so far ("Byte budget"), so a stream of
 * large entries never puts a huge reply in flight.
 *
 * A run holds up to two claim replies at once (the batch being handled and the next one,
 * claimed beside it), so every claim after a run's first gets half of maxRoundBytes: the
 * budget bounds what the process holds, not one reply. The first claim has nothing beside
 * it and gets the whole budget. Until an entry was seen, the entry size is what the caller
 * passes in (learned earlier in this process, or probed: see entry-size.ts), else
 * ASSUMED_ENTRY_BYTES; until a round was handled (in this run or, as the caller passes in,
 * the previous one of the process), time does not limit and no claim is sent beside a round
 * (nothing says yet how long one takes).
 */
import type { ClaimPlan } from './claim';
import type { ConsumerConfig } from './config';
import { probeCount, type Reclaim } from './reclaim-cadence';
import type { Observed } from './run-memory';

/**
 * Entry size assumed before any entry of the stream was seen or probed: at the default
 * budget (4 MiB / 32 KiB = 128) the default batch of 100 needs no probe.
 */
export const ASSUMED_ENTRY_BYTES = 32 * 1024;

/** Claim replies a run holds at once: the batch being handled and the one claimed beside it. */
export const REPLIES_HELD = 2;

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
  /** Claims whose replies were observed. */
  #claims = 0;

  constructor(
    private readonly config: ConsumerConfig,
    known: Observed = {},
  ) {
    this.#entryBytes = known.entryBytes;
    this.#perEntryMs = known.perEntryMs;
  }

  /** What this sizer knows now, for the next run of the process. */
  observed(): Observed {
    return { entryBytes: this.#entryBytes, perEntryMs: this.#perEntryMs };
  }

  /** True when the assumed entry size, not the batch, would cap the first claim: worth a probe. */
  assumptionLimits(): boolean {
    return this.#entryBytes === undefined && this.byteCap() < this.config.batch;
  }

  /** Entries one claim reply may carry under the byte budget (at least 1). */
  byteCap(): number {
    const perReply = this.#claims === 0 ? this.config.maxRoundBytes : this.config.maxRoundBytes / REPLIES_HELD;
    return Math.max(1, Math.floor(perReply / (this.#entryBytes ?? ASSUMED_ENTRY_BYTES)));
  }

  /** True once a round was handled (here or in a previous run): the time a round takes is known, a claim may go out beside one. */
  mayClaimAhead(): boolean {
    return this.#perEntryMs !== undefined;
  }

  /**
   * Entries the next claim may take with `timeLeftMs` of handling time left (by bytes and
   * time); 0 = none. `ahead` entries are handled before this claim's first one starts.
   */
  limit(timeLeftMs: number, ahead = 0): number {
    if (timeLeftMs <= 0) return 0;
    const byBytes = this.byteCap();
    if (this.#perEntryMs === undefined) return byBytes;
    const perEntry = Math.max(this.#perEntryMs, 0.001);
    const byTime = Math.floor((timeLeftMs - (this.#exchangeMs ?? 0) - ahead * perEntry) / perEntry);
    return Math.max(0, Math.min(byBytes, byTime));
  }

  /**
   * The next claim's plan, or undefined when the time left cannot cover one more entry. The
   * reclaim and the fresh read share one limit (both land in the same reply): the reclaim may
   * take at most half, so the fresh read always asks for at least one entry (a COUNT of 0
   * would mean no limit at all). A claim limited to one entry (entries near half the byte
   * budget, or one entry of time left) still reclaims when a reclaim is due, one entry beside
   * the fresh one: otherwise every claim of such a run would leave XAUTOCLAIM out, and the PEL
   * would never be reclaimed (SPEC §5.1 "Reclaim cadence" outranks one entry of budget).
   */
  plan(timeLeftMs: number, reclaim: Reclaim, ahead = 0): ClaimPlan | undefined {
    const limit = this.limit(timeLeftMs, ahead);
    if (limit === 0) return undefined;
    const reclaimed = reclaim === undefined ? 0 : Math.max(1, Math.min(this.#reclaimCount(reclaim), Math.floor(limit / 2)));
    return { fresh: Math.max(1, Math.min(this.config.batch, limit - reclaimed)), reclaim: reclaimed };
  }

  #reclaimCount(reclaim: 'full' | 'probe'): number {
    return reclaim === 'full' ? this.config.reclaimBatch : probeCount(this.config.reclaimBatch);
  }

  observeHandling(entries: number, elapsedMs: number): void {
    if (entries > 0) this.#perEntryMs = blend(this.#perEntryMs, elapsedMs / entries);
  }

  observeExchange(elapsedMs: number): void {
    this.#exchangeMs = blend(this.#exchangeMs, elapsedMs);
  }

  /** An entry size from outside this run's claims (a probe): used until entries are seen. */
  assumeEntryBytes(bytes: number): void {
    this.#entryBytes ??= bytes;
  }

  observeEntries(count: number, bytes: number): void {
    this.#claims += 1;
    if (count > 0) this.#entryBytes = blend(this.#entryBytes, bytes / count);
  }
}
