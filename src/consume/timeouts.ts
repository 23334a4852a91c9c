/**
 * Handler timeouts for one round with a single timer. Deadlines registered in a round never
 * decrease (each is min(now + handlerTimeout, settleBy) at the handler's start), so a FIFO
 * queue ordered by registration is ordered by deadline: one timer armed for the earliest
 * live deadline replaces a setTimeout/clearTimeout pair per entry, which dominated the
 * cost of fast handlers at large batches.
 */

/** Something with a deadline: expired at `at` unless it stopped being `live` before. */
export interface Expiring {
  readonly at: number;
  readonly live: boolean;
  expire(): void;
}

export class RoundTimeouts {
  // The watched objects themselves are queued: no wrapper or closure per entry, which at
  // 500 entries a round was a measurable share of the garbage a round leaves behind.
  readonly #queue: Expiring[] = [];
  #head = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly now: () => number) {}

  /** Calls `watched.expire()` at `watched.at` (epoch ms) if it is still live then. */
  watch(watched: Expiring): void {
    this.#queue.push(watched);
    // A settled entry leaves the timer armed: with sequential handlers the next watch would
    // only arm it again. A timer that fires with nothing live simply stops; the round
    // disposes of it when it ends.
    if (this.#timer === undefined) this.#arm(this.#queue[this.#head]!.at);
  }

  /** Stops the timer; nothing registered afterwards is affected by what came before. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(at: number): void {
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - this.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.now();
    while (this.#head < this.#queue.length) {
      const watched = this.#queue[this.#head]!;
      if (watched.live && watched.at > now) break;
      this.#head += 1;
      if (watched.live) watched.expire();
    }
    const next = this.#queue[this.#head];
    if (next !== undefined) this.#arm(next.at);
  }
}
