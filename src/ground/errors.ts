/**
 * Error types. Expected outcomes of handling an entry are values (see verdict.ts); these
 * are for bad configuration, infrastructure failure and broken invariants. Each sets a
 * stable string `code` so callers branch on it rather than on `instanceof` (bundles can
 * hold two copies of a class).
 */

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'REDIS_UNAVAILABLE'
  | 'REDIS_COMMAND_FAILED'
  | 'REDIS_REPLY_UNEXPECTED'
  | 'RUN_DEADLINE_TOO_CLOSE'
  | 'REST_BLOCKING_UNSUPPORTED'
  | 'REST_PAYLOAD_NOT_UTF8'
  | 'PUBLISH_ROUTE_UNKNOWN'
  | 'PUBLISH_EVENT_INVALID'
  | 'PUBLISH_APPEND_FAILED'
  | 'PUBLISH_KEY_REUSED'
  | 'PUBLISH_SCHEDULE_INVALID'
  | 'PUBLISH_SCHEDULE_UNSUPPORTED'
  | 'CALLBACK_FAILED'
  | 'DEFERRAL_DELAY_INVALID';

export class SagaStreamsError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;

  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

export interface ConfigProblem {
  /** Dotted path of the offending field, e.g. `budgets.blockMs`. */
  readonly path: string;
  readonly message: string;
}

/** Construction-time validation failure listing every problem at once; never echoes values. */
export class ConfigError extends SagaStreamsError {
  readonly problems: readonly ConfigProblem[];

  constructor(subject: string, problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.path || '(root)'}: ${p.message}`);
    super('CONFIG_INVALID', `invalid ${subject}:\n${lines.join('\n')}`);
    this.problems = problems;
  }
}

/** Redis could not be reached or the connection broke: nothing can be assumed settled. */
export class RedisUnavailableError extends SagaStreamsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('REDIS_UNAVAILABLE', message, options);
  }
}

/** Redis answered a command with an error reply (WRONGTYPE, NOSCRIPT, CROSSSLOT, ...). */
export class RedisCommandError extends SagaStreamsError {
  readonly command: string;
  /** The error reply as Redis sent it, e.g. `WRONGTYPE Operation against a key ...`. */
  readonly reply: string;

  constructor(command: string, reply: string, options?: { cause?: unknown }) {
    super('REDIS_COMMAND_FAILED', `${command} failed: ${reply}`, options);
    this.command = command;
    this.reply = reply;
  }

  /** First word of the reply: `WRONGTYPE`, `NOSCRIPT`, `BUSYGROUP`, `ERR`, ... */
  get replyCode(): string {
    return this.reply.split(' ', 1)[0] ?? '';
  }
}

/** A reply did not have the shape this code relies on; treated like any Redis failure. */
export class ReplyShapeError extends SagaStreamsError {
  constructor(what: string) {
    super('REDIS_REPLY_UNEXPECTED', `unexpected reply shape: ${what}`);
  }
}

export class RunDeadlineTooCloseError extends SagaStreamsError {
  constructor(remainingMs: number, requiredMs: number) {
    super(
      'RUN_DEADLINE_TOO_CLOSE',
      `refusing to start a run: ${remainingMs} ms remain before the deadline, at least ${requiredMs} ms are needed`,
    );
  }
}

/**
 * User code given to a run (a round hook, an ordering key, a tracer, a log sink) threw. The
 * run settled what committed and gave back what never started before throwing this (SPEC
 * §5.1 "User code never skips the settle"); `cause` is what was thrown, as it was.
 */
export class CallbackError extends SagaStreamsError<'CALLBACK_FAILED'> {
  readonly callback: string;
  /** The run's report as far as it got (see runReportOf). */
  readonly runReport?: object;

  constructor(callback: string, cause: unknown, runReport?: object) {
    const thrown = describeThrown(cause);
    super('CALLBACK_FAILED', `${callback} threw ${thrown.message === undefined ? `a ${thrown.name}` : `${thrown.name}: ${thrown.message}`}`, { cause });
    this.callback = callback;
    if (runReport !== undefined) this.runReport = runReport;
  }
}

/**
 * `code` of any error-like value, without trusting its class — nor the value: a thrown
 * object whose `code` getter throws, or a revoked Proxy, has no code rather than making
 * the caller throw in its turn.
 */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  try {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** What a log line may say about a thrown value: its name, and for an Error its code and message. */
export interface ThrownDescription {
  readonly name: string;
  readonly code?: string;
  readonly message?: string;
}

/**
 * Describes any thrown value for a log line without trusting it: a non-Error gives only its
 * type; an Error whose getters throw, or a revoked Proxy, gives what could be read — a
 * logging path must never throw in its turn (in a catch block that would turn a handled
 * failure into an unhandled one).
 */
export function describeThrown(error: unknown): ThrownDescription {
  try {
    if (!(error instanceof Error)) return { name: typeof error };
    const name = typeof error.name === 'string' ? error.name : 'Error';
    const message = typeof error.message === 'string' ? error.message : '';
    const code = errorCode(error);
    return code === undefined ? { name, message } : { name, code, message };
  } catch {
    return { name: 'uninspectable' };
  }
}
