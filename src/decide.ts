/**
 * Handling a round's entries (SPEC §5.1 step 2): bounded concurrency, an optional ordering
 * key that keeps one key's entries sequential, a timeout per handler bounded by the
 * deadline, and no new handler once the deadline is near. Every entry leaves with a
 * verdict; the ones never started, or still running at their timeout, are `retain`.
 */
import type { StreamEntry } from './entry';
import type { Decision } from './settle';
import { RoundTimeouts } from './timeouts';
import { Verdicts, verdictOfThrown, type RetainCause, type Verdict } from './verdict';

export interface DeliveryContext {
  /** Aborted when the handler's time is up; the entry is retained whatever happens after. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the handler must have finished. */
  readonly deadline: number;
}

/** Turns one entry into a verdict; throwing is allowed and classified by verdictOfThrown. */
export type EntryProcessor = (entry: StreamEntry, context: DeliveryContext) => Promise<Verdict>;

export interface DecideOptions {
  readonly concurrency: number;
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  /** Epoch ms of the run's deadline. */
  readonly deadline: number;
  readonly handlerTimeoutMs: number;
  readonly settleReserveMs: number;
  readonly now: () => number;
}

export interface DecideResult {
  readonly decisions: Decision[];
  readonly handled: number;
  readonly handlerMicrosSum: number;
  /** True when at least one entry was left unstarted or cut short by the deadline. */
  readonly stoppedForDeadline: boolean;
}

interface Slot {
  verdict: Verdict;
  started: boolean;
}

export async function decideAll(
  entries: readonly StreamEntry[],
  process: EntryProcessor,
  options: DecideOptions,
): Promise<DecideResult> {
  const slots: Slot[] = entries.map(() => ({ verdict: Verdicts.retain('deadline'), started: false }));
  const settleBy = options.deadline - options.settleReserveMs;
  let handled = 0;
  let micros = 0;
  let cutByDeadline = false;

  const timeouts = new RoundTimeouts(options.now);
  // Keys whose earlier entry stayed pending this round: their later entries must wait too,
  // or one saga instance's commands would be handled out of order (and a timed-out handler
  // could still be running beside its successor).
  const heldKeys = new Set<string>();
  const keyOf = options.orderingKey;
  const handleOne = async (index: number): Promise<void> => {
    const entry = entries[index]!;
    const key = keyOf?.(entry);
    if (key !== undefined && heldKeys.has(key)) {
      slots[index]!.verdict = Verdicts.retain('ordering');
      return;
    }
    const now = options.now();
    const limitedByDeadline = settleBy - now < options.handlerTimeoutMs;
    const expiresAt = Math.min(now + options.handlerTimeoutMs, settleBy);
    const started = performance.now();
    const verdict = await handleWithTimeout(entry, process, timeouts, expiresAt, settleBy, limitedByDeadline ? 'deadline' : 'handler_timeout');
    micros += Math.round((performance.now() - started) * 1000);
    handled += 1;
    if (verdict.kind === 'retain' && verdict.cause === 'deadline') cutByDeadline = true;
    if (verdict.kind === 'retain' && key !== undefined) heldKeys.add(key);
    slots[index]!.verdict = verdict;
  };

  try {
    await runOrdered(entries, options.concurrency, options.orderingKey, () => settleBy - options.now() > 0, (index) => {
      slots[index]!.started = true;
      return handleOne(index);
    });
  } finally {
    timeouts.dispose();
  }

  const unstarted = slots.some((s) => !s.started);
  return {
    decisions: slots.map((slot, i) => ({ entry: entries[i]!, verdict: slot.verdict })),
    handled,
    handlerMicrosSum: micros,
    stoppedForDeadline: unstarted || cutByDeadline,
  };
}

/**
 * Runs the processor and settles on whichever comes first: its verdict, or `retain` at
 * `expiresAt`. The AbortSignal is created only if the handler asks for it (most never do,
 * and an AbortController per entry is measurable at large batches).
 */
function handleWithTimeout(
  entry: StreamEntry,
  process: EntryProcessor,
  timeouts: RoundTimeouts,
  expiresAt: number,
  deadline: number,
  cause: RetainCause,
): Promise<Verdict> {
  let controller: AbortController | undefined;
  const context: DeliveryContext = {
    deadline,
    get signal() {
      controller ??= new AbortController();
      return controller.signal;
    },
  };
  return new Promise<Verdict>((resolve) => {
    const cancel = timeouts.watch(expiresAt, () => {
      controller?.abort(new Error(cause));
      resolve(Verdicts.retain(cause));
    });
    const done = (verdict: Verdict) => {
      cancel();
      resolve(verdict);
    };
    try {
      process(entry, context).then(done, (error: unknown) => done(verdictOfThrown(error)));
    } catch (error) {
      done(verdictOfThrown(error));
    }
  });
}

/** limit 1: strictly in order, with no scheduling bookkeeping per entry. */
async function runSequentially(count: number, mayStart: () => boolean, work: (index: number) => Promise<void>): Promise<void> {
  for (let index = 0; index < count && mayStart(); index += 1) await work(index);
}

/**
 * Runs work(i) for each index with at most `limit` in flight. Entries sharing an ordering
 * key run one at a time, in index order; with limit 1 everything runs in order. Stops
 * starting new work as soon as mayStart() says no.
 */
export function runOrdered<T>(
  items: readonly T[],
  limit: number,
  keyOf: ((item: T) => string | undefined) | undefined,
  mayStart: () => boolean,
  work: (index: number) => Promise<void>,
): Promise<void> {
  if (limit === 1) return runSequentially(items.length, mayStart, work);
  const keys = items.map((item) => keyOf?.(item));
  const started = new Array<boolean>(items.length).fill(false);
  const busyKeys = new Set<string>();
  let firstUnstarted = 0;
  let running = 0;

  const pick = (): number => {
    while (firstUnstarted < items.length && started[firstUnstarted]) firstUnstarted += 1;
    for (let i = firstUnstarted; i < items.length; i += 1) {
      const key = keys[i];
      if (!started[i] && (key === undefined || !busyKeys.has(key))) return i;
    }
    return -1;
  };

  return new Promise<void>((resolve) => {
    const pump = (): void => {
      while (running < limit && mayStart()) {
        const index = pick();
        if (index < 0) break;
        started[index] = true;
        const key = keys[index];
        if (key !== undefined) busyKeys.add(key);
        running += 1;
        void work(index).finally(() => {
          running -= 1;
          if (key !== undefined) busyKeys.delete(key);
          pump();
        });
      }
      if (running === 0) resolve();
    };
    pump();
  });
}
