/**
 * The closed verdict contract (SPEC §4). A handler commits and returns (ack), throws a
 * Rejection for a deterministic protocol failure (dead-letter), throws a Deferral to be
 * retried later (retain) — and anything else it throws is treated as transient (retain).
 * Transient failures are never dead-lettered, however many deliveries they took.
 */
import { errorCode, SagaStreamsError } from '../ground/errors';
import { isPromiseLike } from '../ground/maybe-promise';

const REASON_PATTERN = /^[a-z0-9_]{1,64}$/;

export function isValidReason(reason: string): boolean {
  return REASON_PATTERN.test(reason);
}

/**
 * Why an entry stayed pending; low-cardinality, for reports and logs. `handler_contract`
 * is a programming error: the handler returned something other than its success values.
 */
export type RetainCause = 'handler_error' | 'deferred' | 'handler_timeout' | 'deadline' | 'ordering' | 'ordering_key' | 'handler_contract';

export type Verdict =
  | { readonly kind: 'ack'; readonly duplicate: boolean }
  | { readonly kind: 'dead-letter'; readonly reason: string; readonly auth: boolean }
  | {
      readonly kind: 'retain';
      readonly cause: RetainCause;
      /** A Deferral's delay: not redelivered before this many ms after the settle (Redis clock). */
      readonly retryAfterMs?: number;
    };

// Acks are the common case: shared frozen values instead of an object per entry.
const ACKED: Verdict = Object.freeze({ kind: 'ack', duplicate: false });
const ACKED_DUPLICATE: Verdict = Object.freeze({ kind: 'ack', duplicate: true });

export const Verdicts = {
  ack: (duplicate = false): Verdict => (duplicate ? ACKED_DUPLICATE : ACKED),
  deadLetter(reason: string, options: { auth?: boolean } = {}): Verdict {
    if (!isValidReason(reason)) throw new TypeError(`dead-letter reason must match ${REASON_PATTERN}: got ${JSON.stringify(reason)}`);
    return { kind: 'dead-letter', reason, auth: options.auth ?? false };
  },
  retain: (cause: RetainCause, retryAfterMs?: number): Verdict =>
    retryAfterMs === undefined ? { kind: 'retain', cause } : { kind: 'retain', cause, retryAfterMs: checkedRetryAfter(retryAfterMs) },
} as const;

/**
 * The longest a retry may wait (SPEC §5.6): a Deferral's retryAfterMs and a consumer's
 * retry.maxMs. A day: a deferred entry stays pending meanwhile, and pending entries hold back
 * the safe trim of their stream.
 */
export const MAX_RETRY_DELAY_MS = 86_400_000;

/** A Deferral asked for a delay that is not a whole number of ms in 1..=MAX_RETRY_DELAY_MS. */
export class DeferralDelayError extends SagaStreamsError<'DEFERRAL_DELAY_INVALID'> {
  readonly field = 'retryAfterMs';

  constructor() {
    super('DEFERRAL_DELAY_INVALID', `Deferral retryAfterMs must be an integer number of ms in 1..=${MAX_RETRY_DELAY_MS} (one day)`);
  }
}

/** True for a delay a Deferral may ask for. */
export function isValidRetryAfter(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_RETRY_DELAY_MS;
}

function checkedRetryAfter(value: unknown): number {
  if (!isValidRetryAfter(value)) throw new DeferralDelayError();
  return value;
}

/**
 * Thrown by a handler for a deterministic failure that no redelivery can fix (a contract
 * violation, a poison message). The entry is dead-lettered with `reason`.
 */
export class Rejection extends Error {
  readonly code = 'REJECTION';
  readonly reason: string;

  constructor(reason: string, message?: string, options?: { cause?: unknown }) {
    if (!isValidReason(reason)) throw new TypeError(`Rejection reason must match ${REASON_PATTERN}: got ${JSON.stringify(reason)}`);
    super(message ?? `rejected: ${reason}`, options);
    this.name = 'Rejection';
    this.reason = reason;
  }
}

/**
 * Thrown by a handler that wants the entry again later (e.g. the saga is paused, a downstream
 * answered 429). The entry is retained; with `retryAfterMs` it is not redelivered before that
 * many ms after the round's settle (Redis clock), nor before its retry backoff. A delay that is
 * not an integer in 1..=MAX_RETRY_DELAY_MS throws DeferralDelayError here, in the handler: a
 * thrown error is transient, so the entry is retained all the same, without the delay.
 */
export class Deferral extends Error {
  readonly code = 'DEFERRAL';
  readonly retryAfterMs: number | undefined;

  constructor(message = 'deferred', options?: { cause?: unknown; retryAfterMs?: number }) {
    const retryAfterMs = options?.retryAfterMs === undefined ? undefined : checkedRetryAfter(options.retryAfterMs);
    super(message, options);
    this.name = 'Deferral';
    this.retryAfterMs = retryAfterMs;
  }
}

/** What a handler may return: nothing or 'committed' (acked), or 'duplicate' (inbox saw it; acked). */
export type HandlerOutcome = void | 'committed' | 'duplicate';

/**
 * The verdict of what a handler returned. Only its success values ack. Anything else
 * (`false`, `'retry'`, `null`, an object) says nothing about a commit — often the handler
 * meant "not done" — so acking it could lose the entry: it stays pending, as the
 * programming error `handler_contract`.
 */
export function verdictOfOutcome(outcome: unknown): Verdict {
  if (outcome === undefined || outcome === 'committed') return Verdicts.ack();
  if (outcome === 'duplicate') return Verdicts.ack(true);
  return Verdicts.retain('handler_contract');
}

/**
 * The verdict of `handler(argument)`, as `async () => verdictOfOutcome(await handler(argument))`
 * gives it, but synchronous when the handler is: the verdict itself, a promise only for a
 * thenable, and a throw passes straight through (the round classifies it). No closure or
 * promise per entry for a synchronous handler.
 */
export function verdictOfHandler<A>(handler: (argument: A) => unknown, argument: A): Verdict | Promise<Verdict> {
  const outcome = handler(argument);
  return isPromiseLike(outcome) ? Promise.resolve(outcome).then(verdictOfOutcome) : verdictOfOutcome(outcome);
}

/**
 * What an entry processor answered, as a verdict it may stand for. A processor is user code
 * too (createPoller takes any): an answer that is not one of the three verdicts — undefined,
 * 'ack', an object without a known kind, a dead-letter with an unusable reason, a value whose
 * getters throw — says nothing about a commit, so it is retained as the programming error
 * `handler_contract`, and the run goes on (never acked, never dead-lettered).
 */
export function verdictOfAnswer(answer: unknown): Verdict {
  try {
    const kind = (answer as { kind?: unknown } | null | undefined)?.kind;
    if (kind === 'ack' || kind === 'retain') return answer as Verdict;
    if (kind === 'dead-letter') {
      const reason = (answer as { reason?: unknown }).reason;
      if (typeof reason === 'string' && isValidReason(reason)) return answer as Verdict;
    }
  } catch {
    // A throwing getter or a revoked proxy: no verdict can be read from it.
  }
  return Verdicts.retain('handler_contract');
}

/**
 * Maps anything a handler threw to its verdict, by `code` rather than class identity.
 * Never throws: a value that cannot even be inspected (a throwing getter, a revoked
 * Proxy) proves nothing deterministic, so it is retained and the run goes on.
 */
export function verdictOfThrown(error: unknown): Verdict {
  try {
    return classifyThrown(error);
  } catch {
    return Verdicts.retain('handler_error');
  }
}

function classifyThrown(error: unknown): Verdict {
  switch (errorCode(error)) {
    case 'REJECTION': {
      const reason = (error as { reason?: unknown }).reason;
      // A malformed reason cannot be trusted as deterministic: keep the entry.
      return typeof reason === 'string' && isValidReason(reason) ? Verdicts.deadLetter(reason) : Verdicts.retain('handler_error');
    }
    case 'DEFERRAL': {
      // A delay that cannot be trusted is dropped: the entry comes back after its backoff.
      const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
      return isValidRetryAfter(retryAfterMs) ? Verdicts.retain('deferred', retryAfterMs) : Verdicts.retain('deferred');
    }
    default:
      return Verdicts.retain('handler_error');
  }
}
