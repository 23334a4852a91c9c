/**
 * Reclaim cadence (SPEC §5.1): XAUTOCLAIM runs on a run's first claim, after any fresh read
 * that came back short, and at least every `every` claims; claims that fresh entries fill
 * skip it.
 *
 * XAUTOCLAIM rescans up to COUNT × 10 PEL entries, and checks that each one still exists in
 * the stream before it even looks at its idle time: about 1 µs of Redis CPU per entry
 * scanned (measured, Redis 7.0). While fresh reads fill the rounds, the PEL is mostly the
 * batches in flight — two per consumer process — none of them idle, so with 4 processes on
 * one stream a full reclaim (COUNT 100) scanned ~800 busy entries, ~800 µs, to find
 * nothing. The reclaim due only because `every` claims went by is therefore a probe: COUNT
 * reclaimBatch / 10, so it scans at most reclaimBatch entries from the shared cursor (its
 * cost follows the batch, not the PEL). The cursor still advances, so successive probes page
 * through the whole PEL and no idle entry is starved; a probe that finds anything makes the
 * next claim planned a full reclaim, so a backlog of idle entries (a crashed consumer's batches) is
 * taken at the full rate once seen. The first claim and the one after a short read reclaim
 * in full: then the PEL is what there is to do. With `every` 1 every claim reclaims in full
 * (no probes): the setting asks for the PEL first, always.
 *
 * Claims are counted as they go out (`sending`), not as they answer: a run may send one before
 * the claim ahead of it answered (run-loop.ts), and "every `every` claims" must count that one
 * too. "The claim after" a short read is the first one planned once that read's answer is in:
 * the claim sent early may already be out without a full reclaim, and the one after it
 * reclaims. Likewise behind a probe: the claim sent early before its answer reclaims nothing,
 * and a probe's finding makes the claim after that one reclaim in full. None goes out early
 * behind a full reclaim.
 */
import { readShort, type ClaimResult } from './claim';

/** What the next claim reclaims: everything up to reclaimBatch, a probe, or nothing. */
export type Reclaim = 'full' | 'probe' | undefined;

/** A probe's COUNT is reclaimBatch divided by this (XAUTOCLAIM then scans at most reclaimBatch PEL entries). */
export const PROBE_DIVISOR = 10;

/** XAUTOCLAIM COUNT of a probe for this reclaimBatch (at least 1). */
export function probeCount(reclaimBatch: number): number {
  return Math.max(1, Math.ceil(reclaimBatch / PROBE_DIVISOR));
}

export class ReclaimCadence {
  #full = true;
  #skipped = 0;

  constructor(private readonly every: number) {}

  /** What the next claim should reclaim. */
  due(): Reclaim {
    if (this.#full || this.every === 1) return 'full';
    return this.#skipped + 1 >= this.every ? 'probe' : undefined;
  }

  /** A claim goes out that reclaims `planned` (undefined: none). */
  sending(planned: Reclaim): void {
    this.#skipped = planned === undefined ? this.#skipped + 1 : 0;
  }

  /**
   * The answer to a claim that was planned to reclaim `planned` (what due() said then). What it
   * asks for stands until a full reclaim answers: an answer landing after it (a claim sent
   * early behind the one that asked) never takes it back, and a full reclaim that failed
   * (NOSCRIPT, claimed again through claim.lua) is asked for again.
   */
  claimed(planned: Reclaim, claim: ClaimResult): void {
    if (planned === 'full') this.#full = false;
    const found = claim.reclaimed + claim.deletedIds.length > 0;
    // A reclaim cut short by the byte budget left idle entries behind: the next one is full too.
    if (readShort(claim) || (planned === 'probe' && found) || (planned !== undefined && claim.cut && claim.reclaimed > 0)) this.#full = true;
  }
}
