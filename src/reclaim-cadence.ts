/**
 * Reclaim cadence (SPEC §5.1): XAUTOCLAIM runs on a run's first claim, after any fresh read
 * that came back short, and at least every `every` claims; claims that fresh entries fill
 * skip it (it rescans up to COUNT × 10 PEL entries, and the PEL holds up to two batches).
 */
import type { ClaimPlan, ClaimResult } from './claim';

export class ReclaimCadence {
  #due = true;
  #skipped = 0;

  constructor(private readonly every: number) {}

  due(): boolean {
    return this.#due || this.#skipped + 1 >= this.every;
  }

  claimed(plan: ClaimPlan, claim: ClaimResult): void {
    this.#skipped = plan.reclaim > 0 ? 0 : this.#skipped + 1;
    this.#due = claim.entries.length - claim.reclaimed < claim.freshRequested;
  }
}
