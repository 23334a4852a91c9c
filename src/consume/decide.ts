/**
 * Handling a round's entries (SPEC §5.1 step 2): bounded concurrency, an optional ordering
 * key that keeps one key's entries sequential, a timeout per handler bounded by the
 * deadline, and no new handler once the deadline is near. Every entry leaves with a
 * verdict; the ones never started, or still running at their timeout, are `retain`; an
 * entry that repeats a field name is `entry_malformed` whatever processor runs.
 */
import { hasMalformedFields, type StreamEntry } from '../entry/entry';
import { CoreReasons } from '../verdict/core-reasons';
import type { Decision } from './settle';
import type { ConsumerScope } from '../telemetry/tracing';
import { RoundTimeouts, type Expiring } from './timeouts';
import { isPromiseLike } from '../ground/maybe-promise';
import { Verdicts, verdictOfAnswer, verdictOfThrown, type RetainCause, type Verdict } from '../verdict/verdict';

export interface DeliveryContext {
  /** Aborted when the handler's time is up; the entry is retained whatever happens after. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the handler must have finished. */
  readonly deadline: number;
  /** The consumer's stream and group, for the entry's trace span. */
  readonly scope?: ConsumerScope;
}

/**
 * Turns one entry into a verdict; throwing is allowed and classified by verdictOfThrown.
 * A processor that knows its verdict at once (native HMAC, synchronous handler) may return
 * it as a plain value: the round then awaits nothing and makes no promise for that entry.
 */
export type EntryProcessor = (entry: StreamEntry, context: DeliveryContext) => Verdict | Promise<Verdict>;

export interface DecideOptions {
  readonly concurrency: number;
  /**
   * The ordering key of each entry (index for index), computed once by the caller: entries
   * with the same key run one at a time, in order, and once one stays pending its later
   * ones of the round are held (`retain`, cause `ordering`) without being handed over.
   */
  readonly keys?: ReadonlyArray<OrderingKey>;
  /**
   * Keys held by a retained entry (here or in an earlier round of the run): their entries are
   * `retain` (ordering) without being handed over, and a handed-over entry that is retained
   * adds its key. Shared with the caller, who keeps it across rounds; a round-local set by default.
   */
  readonly held?: Set<string>;
  /** Epoch ms of the run's deadline. */
  readonly deadline: number;
  readonly handlerTimeoutMs: number;
  readonly settleReserveMs: number;
  readonly now: () => number;
  readonly scope?: ConsumerScope;
  /**
   * Asked just before an entry would reach its processor: once true, that entry and every
   * later one is `retain` (deadline) without being handed over (a stopping run releases them).
   */
  readonly stop?: () => boolean;
}

export interface DecideResult {
  readonly decisions: Decision[];
  /** Entries handed to the processor. */
  readonly handled: number;
  readonly handlerMicrosSum: number;
  /** True when at least one entry was left unstarted or cut short by the deadline. */
  readonly stoppedForDeadline: boolean;
  /** 1 at the index of each entry handed to the processor, 0 elsewhere. */
  readonly handedOver: Uint8Array;
}

/** An entry whose ordering key could not be computed (the user function threw): see KEY_FAILED. */
export const KEY_FAILED: unique symbol = Symbol('ordering key failed');
/** An entry's ordering key: none, a key, or KEY_FAILED (it might be a held one: never started). */
export type OrderingKey = string | undefined | typeof KEY_FAILED;

const MALFORMED: Verdict = Object.freeze(Verdicts.deadLetter(CoreReasons.entryMalformed));
// Retains without an object per entry: verdicts are read, never changed.
export const HELD: Verdict = Object.freeze(Verdicts.retain('ordering'));
const UNKEYED: Verdict = Object.freeze(Verdicts.retain('ordering_key'));
const NOT_STARTED: Verdict = Object.freeze(Verdicts.retain('deadline'));

export async function decideAll(
  entries: readonly StreamEntry[],
  process: EntryProcessor,
  options: DecideOptions,
): Promise<DecideResult> {
  const round = new RoundDecider(entries, process, options);
  try {
    if (options.concurrency === 1) await round.decideInOrder();
    else await runOrdered(entries.length, options.concurrency, options.keys, round.mayStart, round.decideAsync);
  } finally {
    round.timeouts.dispose();
  }
  return round.result();
}

/**
 * The state of one decideAll call. Entry by entry it is synchronous: an entry whose
 * processor answers with a plain verdict is recorded before the next starts, and only a
 * processor's promise is awaited (with the round's timer watching it).
 */
class RoundDecider {
  readonly timeouts: RoundTimeouts;
  readonly #entries: readonly StreamEntry[];
  readonly #process: EntryProcessor;
  readonly #options: DecideOptions;
  readonly #verdicts: Array<Verdict | undefined>;
  readonly #handedOver: Uint8Array;
  readonly #settleBy: number;
  // Keys whose earlier entry stayed pending: their later entries must wait too, or one saga
  // instance's commands would be handled out of order (and a timed-out handler could still
  // be running beside its successor).
  readonly #heldKeys: Set<string>;
  #handled = 0;
  #micros = 0;
  #cutByDeadline = false;

  constructor(entries: readonly StreamEntry[], process: EntryProcessor, options: DecideOptions) {
    this.#entries = entries;
    this.#process = process;
    this.#options = options;
    this.#verdicts = new Array<Verdict | undefined>(entries.length).fill(undefined);
    this.#handedOver = new Uint8Array(entries.length);
    this.#settleBy = options.deadline - options.settleReserveMs;
    this.#heldKeys = options.held ?? new Set<string>();
    this.timeouts = new RoundTimeouts(options.now);
  }

  /** The clock reading when a handler may still start (before the settle reserve), else undefined. */
  readonly mayStart = (): number | undefined => {
    const now = this.#options.now();
    return this.#settleBy - now > 0 ? now : undefined;
  };

  /** limit 1: strictly in order, awaiting only the entries whose processor returned a promise. */
  async decideInOrder(): Promise<void> {
    const count = this.#entries.length;
    for (let index = 0; index < count; index += 1) {
      const now = this.mayStart();
      if (now === undefined) break;
      const pending = this.decide(index, now);
      if (pending !== undefined) await pending;
    }
  }

  readonly decideAsync = async (index: number, now: number): Promise<void> => {
    await this.decide(index, now);
  };

  /**
   * Decides entry `index`; a promise only while its processor's promise is outstanding.
   * `now` is the reading of the mayStart() call that allowed it: one clock read per entry
   * fewer, and clock reads showed up in profiles.
   */
  decide(index: number, now: number): Promise<void> | undefined {
    const entry = this.#entries[index]!;
    if (hasMalformedFields(entry)) {
      // A repeated name is ambiguous, a name that is not UTF-8 is no name: no processor may
      // pick a value (not even the origin check's).
      this.#verdicts[index] = MALFORMED;
      return undefined;
    }
    const options = this.#options;
    const key = options.keys?.[index];
    if (key === KEY_FAILED) {
      this.#verdicts[index] = UNKEYED;
      return undefined;
    }
    if (key !== undefined && this.#heldKeys.has(key)) {
      this.#verdicts[index] = HELD;
      return undefined;
    }
    if (options.stop?.() === true) {
      // Never handed over: its key is not held by it (a stopping run may release it).
      this.#cutByDeadline = true;
      this.#verdicts[index] = NOT_STARTED;
      return undefined;
    }
    const settleBy = this.#settleBy;
    const retainAs: RetainCause = settleBy - now < options.handlerTimeoutMs ? 'deadline' : 'handler_timeout';
    const attempt = new Attempt(Math.min(now + options.handlerTimeoutMs, settleBy), settleBy, retainAs, options.now, options.scope);
    const started = performance.now();
    this.#handedOver[index] = 1;
    this.#handled += 1;
    const answer = attempt.run(this.#process, entry);
    if (attempt.outcome === undefined) {
      this.#timed(index, key, answer as Verdict, started);
      return undefined;
    }
    this.timeouts.watch(attempt);
    return attempt.outcome.then((verdict) => this.#timed(index, key, verdict, started));
  }

  #timed(index: number, key: string | undefined, verdict: Verdict, started: number): void {
    this.#micros += Math.round((performance.now() - started) * 1000);
    this.#record(index, key, verdict);
  }

  #record(index: number, key: string | undefined, verdict: Verdict): void {
    if (verdict.kind === 'retain') {
      if (verdict.cause === 'deadline') this.#cutByDeadline = true;
      if (key !== undefined) this.#heldKeys.add(key);
    }
    this.#verdicts[index] = verdict;
  }

  result(): DecideResult {
    let unstarted = 0;
    const verdicts = this.#verdicts;
    const decisions = this.#entries.map((entry, i): Decision => {
      const verdict = verdicts[i];
      if (verdict !== undefined) return { entry, verdict };
      unstarted += 1;
      return { entry, verdict: NOT_STARTED };
    });
    return {
      decisions,
      handled: this.#handled,
      handlerMicrosSum: this.#micros,
      stoppedForDeadline: unstarted > 0 || this.#cutByDeadline,
      handedOver: this.#handedOver,
    };
  }
}

/**
 * One handler call, which is also the handler's DeliveryContext and its entry in the
 * round's timeouts: one object per entry instead of a context, a watch and their closures.
 * It settles on whichever comes first, the processor's verdict or `retain` at `at`.
 * The AbortSignal is created only if the handler asks for it (most never do, and an
 * AbortController per entry is measurable at large batches); the promise of the outcome
 * only if the processor answers with a promise.
 *
 * "First" is judged by the clock, not by which callback runs first: a handler that blocks
 * the event loop past `at` keeps the timer from firing, and its outcome then arrives
 * before the expiry does. Whatever it returned or threw, it is late, so it is `retain`
 * (SPEC §5.1): an ack after the deadline could land after another run reclaimed the entry.
 * A synchronous processor cannot be interrupted at all: it is judged by that same clock
 * check the moment it returns.
 */
class Attempt implements DeliveryContext, Expiring {
  /** Set by run() when the processor answered with a promise. */
  outcome: Promise<Verdict> | undefined;
  #live = true;
  #resolve: ((verdict: Verdict) => void) | undefined;
  #verdict: Verdict | undefined;
  #controller: AbortController | undefined;
  readonly #retainAs: RetainCause;
  readonly #now: () => number;

  constructor(
    /** When the handler's own time is up (epoch ms). */
    readonly at: number,
    /** DeliveryContext.deadline: when the round must settle. */
    readonly deadline: number,
    retainAs: RetainCause,
    now: () => number,
    readonly scope: ConsumerScope | undefined,
  ) {
    this.#retainAs = retainAs;
    this.#now = now;
  }

  get live(): boolean {
    return this.#live;
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /** The verdict now, or (with `outcome` set) a promise of it. */
  run(process: EntryProcessor, entry: StreamEntry): Verdict | Promise<Verdict> {
    try {
      const answer = process(entry, this);
      if (!isPromiseLike(answer)) {
        this.#arrive(answer);
        return this.#verdict!;
      }
      this.outcome = new Promise<Verdict>((resolve) => {
        this.#resolve = resolve;
      });
      answer.then(
        (verdict) => this.#arrive(verdict),
        (error: unknown) => this.#arrive(verdictOfThrown(error)),
      );
    } catch (error) {
      this.#arrive(verdictOfThrown(error));
      if (this.outcome === undefined) return this.#verdict!;
    }
    return this.outcome;
  }

  expire(): void {
    if (!this.#live) return;
    this.#controller?.abort(new Error(this.#retainAs));
    this.#settle(Verdicts.retain(this.#retainAs));
  }

  /** The processor's verdict, unless it came at or after `at` (the moment expire() is due). */
  #arrive(answer: unknown): void {
    if (!this.#live) return;
    if (this.#now() >= this.at) this.expire();
    else this.#settle(verdictOfAnswer(answer));
  }

  #settle(verdict: Verdict): void {
    if (!this.#live) return;
    this.#live = false;
    this.#verdict = verdict;
    this.#resolve?.(verdict);
  }
}

/** limit 1: strictly in order, with no scheduling bookkeeping per entry. */
async function runSequentially(count: number, mayStart: () => number | undefined, work: (index: number, now: number) => Promise<void>): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const now = mayStart();
    if (now === undefined) return;
    await work(index, now);
  }
}

/**
 * Runs work(i) for each index below `count` with at most `limit` in flight. Entries sharing
 * an ordering key (`keys[i]`) run one at a time, in index order; with limit 1 everything runs
 * in order. Stops starting new work as soon as mayStart() answers undefined; each work(i)
 * starts synchronously right after the mayStart() call that allowed it, with its clock reading.
 */
export function runOrdered(
  count: number,
  limit: number,
  keys: ReadonlyArray<string | symbol | undefined> | undefined,
  mayStart: () => number | undefined,
  work: (index: number, now: number) => Promise<void>,
): Promise<void> {
  if (limit === 1) return runSequentially(count, mayStart, work);
  const started = new Uint8Array(count);
  const busyKeys = new Set<string | symbol>();
  let firstUnstarted = 0;
  let running = 0;

  const pick = (): number => {
    while (firstUnstarted < count && started[firstUnstarted] === 1) firstUnstarted += 1;
    for (let i = firstUnstarted; i < count; i += 1) {
      const key = keys?.[i];
      if (started[i] === 0 && (key === undefined || !busyKeys.has(key))) return i;
    }
    return -1;
  };

  let failure: { readonly error: unknown } | undefined;
  return new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      while (running < limit && failure === undefined) {
        const index = pick();
        if (index < 0) break;
        const now = mayStart();
        if (now === undefined) break;
        started[index] = 1;
        const key = keys?.[index];
        if (key !== undefined) busyKeys.add(key);
        running += 1;
        void work(index, now)
          .catch((error: unknown) => {
            // A defect, never a handler's failure (those are verdicts): no further entry starts.
            failure ??= { error };
          })
          .finally(() => {
            running -= 1;
            if (key !== undefined) busyKeys.delete(key);
            pump();
          });
        if (failure !== undefined) break;
      }
      if (running === 0) {
        if (failure === undefined) resolve();
        else reject(failure.error);
      }
    };
    pump();
  });
}
