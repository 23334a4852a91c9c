/**
 * How many entries a run's next claim asks for (SPEC §5.1): no more than the time left
 * before the settle reserve can cover at the handling speed observed so far ((a): nothing
 * at all once not even one entry and a round trip fit). The byte budget is not enforced
 * here: the claim carries the byte allowance and claim.lua keeps the reply within it, on
 * the sizes Redis measures (see claim.lua and SPEC §5.1 "Byte budget"). The sizes claims
 * reported only keep the count asked for near what fits, so that a native read is not
 * refused and a read through Lua copies little it then hands back.
 *
 * Until a round was handled (in this run or, as the caller passes in, the previous one of
 * the process), time does not limit and no claim is sent beside a round: nothing says yet
 * how long one takes.
 */
import type { ClaimPlan, FreshRead } from './claim';
import type { ConsumerConfig } from './config';
import { probeCount, type Reclaim } from './reclaim-cadence';
import type { Observed } from './run-memory';

/** Weight of the newest observation in the moving averages: recent rounds matter most. */
const NEWEST_WEIGHT = 0.5;

function blend(previous: number | undefined, observed: number): number {
  return previous === undefined ? observed : previous + NEWEST_WEIGHT * (observed - previous);
}

/** Room for a claim's reply: bytes it may carry, and whether it may carry one larger entry alone. */
export interface ClaimRoom {
  readonly allowance: number;
  readonly alone: boolean;
  /** Most fresh entries it may take (a run holding entries behind ordering keys takes fewer). */
  readonly freshCap: number;
  /** Most entries it may reclaim, when a run holding entries behind ordering keys must take fewer. */
  readonly reclaimCap?: number;
  readonly read: FreshRead;
  readonly gate?: string;
}

export class RoundSizer {
  /** Wall-clock handling time per entry (concurrency included), ms. */
  #perEntryMs: number | undefined;
  /** One exchange with Redis, ms. */
  #exchangeMs: number | undefined;
  /** Bytes a claim counted per entry it returned (claim.lua's measure, or its bound for a native read). */
  #bytesPerEntry: number | undefined;

  constructor(
    private readonly config: ConsumerConfig,
    known: Observed = {},
  ) {
    this.#perEntryMs = known.perEntryMs;
    this.#bytesPerEntry = known.bytesPerEntry;
  }

  /** What this sizer knows now, for the next run of the process. */
  observed(): Observed {
    return { perEntryMs: this.#perEntryMs, bytesPerEntry: this.#bytesPerEntry };
  }

  /** True once a round was handled (here or in a previous run): the time a round takes is known, a claim may go out beside one. */
  mayClaimAhead(): boolean {
    return this.#perEntryMs !== undefined;
  }

  /**
   * Entries the next claim may take with `timeLeftMs` of handling time left; 0 = none.
   * `ahead` entries are handled before this claim's first one starts.
   */
  limit(timeLeftMs: number, ahead = 0): number {
    if (timeLeftMs <= 0) return 0;
    if (this.#perEntryMs === undefined) return Number.POSITIVE_INFINITY;
    const perEntry = Math.max(this.#perEntryMs, 0.001);
    return Math.max(0, Math.floor((timeLeftMs - (this.#exchangeMs ?? 0) - ahead * perEntry) / perEntry));
  }

  /**
   * The next claim's plan, or undefined when the time left cannot cover one more entry. The
   * reclaim and the fresh read share one limit (both land in the same reply): the reclaim may
   * take at most half, so the fresh read always asks for at least one entry. A claim limited
   * to one entry still reclaims when a reclaim is due, one entry beside the fresh one:
   * otherwise every claim of such a run would leave XAUTOCLAIM out, and the PEL would never
   * be reclaimed (SPEC §5.1 "Reclaim cadence" outranks one entry of budget).
   */
  plan(timeLeftMs: number, reclaim: Reclaim, ahead: number, room: ClaimRoom): ClaimPlan | undefined {
    const limit = this.limit(timeLeftMs, ahead);
    if (limit === 0) return undefined;
    const reclaimCap = room.reclaimCap ?? Number.POSITIVE_INFINITY;
    const reclaimed = reclaim === undefined || reclaimCap <= 0 ? 0 : Math.max(1, Math.min(this.#reclaimCount(reclaim), Math.floor(limit / 2), reclaimCap));
    // Asking for about what fits: a native read beyond it is refused (read through Lua
    // instead), and a read through Lua copies what it then hands back.
    const byBytes = this.entriesWithin(room.allowance);
    const fresh = room.read === 'none' || room.freshCap <= 0 ? 0 : Math.max(1, Math.min(this.config.batch, room.freshCap, limit - reclaimed, byBytes));
    if (fresh === 0 && reclaimed === 0) return undefined;
    return { fresh, reclaim: reclaimed, allowance: room.allowance, alone: room.alone, read: fresh === 0 ? 'none' : room.read, gate: room.gate };
  }

  /** Entries of the size claims reported so far that `bytes` hold (unbounded until a claim reported one). */
  entriesWithin(bytes: number): number {
    return this.#bytesPerEntry === undefined ? Number.POSITIVE_INFINITY : Math.floor(bytes / this.#bytesPerEntry);
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

  /** What a claim counted against its allowance for the entries it returned. */
  observeClaim(entries: number, bytes: number): void {
    if (entries > 0) this.#bytesPerEntry = blend(this.#bytesPerEntry, bytes / entries);
  }
}
