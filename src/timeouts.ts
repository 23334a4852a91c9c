/**
 * Handler timeouts for one round with a single timer. Deadlines registered in a round never
 * decrease (each is min(now + handlerTimeout, settleBy) at the handler's start), so a FIFO
 * queue ordered by registration is ordered by deadline: one timer armed for the earliest
 * live deadline replaces a setTimeout/clearTimeout pair per entry, which dominated the
 * cost of fast handlers at large batches.
 */

interface Watch {
  readonly at: number;
  readonly onExpire: () => void;
  live: boolean;
}

export class RoundTimeouts {
  readonly #queue: Watch[] = [];
  #head = 0;
  #live = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly now: () => number) {}

  /** Calls onExpire at `at` (epoch ms) unless the returned cancel runs first. */
  watch(at: number, onExpire: () => void): () => void {
    const watch: Watch = { at, onExpire, live: true };
    this.#queue.push(watch);
    this.#live += 1;
    if (this.#timer === undefined) this.#arm(this.#queue[this.#head]!.at);
    // Cancelling leaves the timer armed: with sequential handlers the next watch would
    // only arm it again. A timer that fires with nothing live simply stops; the round
    // disposes of it when it ends.
    return () => {
      if (!watch.live) return;
      watch.live = false;
      this.#live -= 1;
    };
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
      const watch = this.#queue[this.#head]!;
      if (watch.live && watch.at > now) break;
      this.#head += 1;
      if (!watch.live) continue;
      watch.live = false;
      this.#live -= 1;
      watch.onExpire();
    }
    const next = this.#queue[this.#head];
    if (next !== undefined && this.#live > 0) this.#arm(next.at);
  }
}
