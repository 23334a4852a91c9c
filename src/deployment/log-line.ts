/**
 * The one log-line schema of every platform (Lambda, Worker, local stack, CLI `--json`):
 * a JSON object per line with a fixed set of top-level fields, so one query or alert works
 * on every platform's logs. Lines are built here (`formatLogLine`, `failureLine`) and
 * checked here (`logLineProblems`, used by the tests that capture each platform's lines).
 *
 * Shape:
 * - `level` info | warn | error, `msg` a constant phrase (never interpolated values),
 *   `deployment`, `timestamp` (epoch ms);
 * - context: `job`, `component`, `consumer`, `stream`, `group`, `role`;
 * - counters: the run report, backlog probe, trim and relay numbers, top-level because
 *   CloudWatch Embedded Metric Format reads metric values there; `stoppedForDeadline`;
 * - `error`: `{name, code?, message?}` only — never a stack trace, a cause, a header or a
 *   body (this library's messages carry no secret values; see errors.ts);
 * - `detail`: a small object for what is neither (the trim's per-stream status, a readiness
 *   check list, a dropped message's id);
 * - EMF only: `_aws` and its dimension fields `Deployment`, `Consumer`.
 * Any other top-level field is a schema violation.
 *
 * Hand-written rather than zod: it ships in every bundle (the Worker's has a size budget)
 * and runs on hot paths.
 */
import { COUNTERS } from '../consume/report';
import { describeThrown } from '../ground/errors';

export const LOG_LEVELS = ['info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_JOBS = ['poll', 'trim', 'relay', 'backlog', 'publish'] as const;
export type LogJob = (typeof LOG_JOBS)[number];

/**
 * Numeric top-level fields besides the run report's COUNTERS. (A plain literal, not a spread
 * of COUNTERS: only the checker reads the list, and a literal is dropped from bundles that do
 * not use it — the Lambda poll bundle has a size budget.)
 */
const OTHER_COUNTERS = [
  'rounds',
  'durationMs',
  // trim
  'removed',
  'deadLettersRemoved',
  'consumersReaped',
  // backlog probe
  'pending',
  'oldestPendingAgeMs',
  'oldestPendingDeliveries',
  'deadLetters',
  'consumers',
  'lag',
  'flowClosedOverAge',
  'flowWaitingOnLimit',
  'rateLimitRoomInMs',
  // relay
  'passes',
  'published',
  'duplicates',
  'scheduledPublished',
  'cancelsApplied',
  'cancelsMissed',
  'heldBack',
  'refused',
  'inboxDeleted',
  'outboxDeleted',
  'outboxKeysDeleted',
  // malformed wake-up messages and the like
  'count',
] as const;
export type CounterField = (typeof COUNTERS)[number] | (typeof OTHER_COUNTERS)[number];

function isCounterField(key: string): boolean {
  return (COUNTERS as readonly string[]).includes(key) || (OTHER_COUNTERS as readonly string[]).includes(key);
}
export type Counters = Partial<Record<CounterField, number>>;

const CONTEXT_FIELDS = ['job', 'component', 'consumer', 'stream', 'group', 'role'] as const;
const EMF_DIMENSIONS = ['Deployment', 'Consumer'] as const;

export interface LogError {
  readonly name: string;
  readonly code?: string;
  readonly message?: string;
}

export interface EmfSpec {
  readonly namespace: string;
  /** Dimension name → value, e.g. `{Deployment: 'shop', Consumer: 'fulfil'}`. */
  readonly dimensions: Readonly<Partial<Record<(typeof EMF_DIMENSIONS)[number], string>>>;
  readonly metrics: ReadonlyArray<{ readonly name: CounterField; readonly unit: 'Count' | 'Milliseconds' }>;
}

export interface LogLineInput {
  readonly level: LogLevel;
  readonly msg: string;
  readonly deployment: string;
  readonly timestamp: number;
  readonly job?: LogJob;
  readonly component?: string;
  readonly consumer?: string;
  readonly stream?: string;
  readonly group?: string;
  readonly role?: string;
  readonly counters?: Counters;
  readonly stoppedForDeadline?: boolean;
  /** Anything thrown: reduced to its name, code and message (describeThrown). */
  readonly error?: unknown;
  readonly detail?: Readonly<Record<string, unknown>>;
  readonly emf?: EmfSpec;
}

/** What a log line may say about a thrown value. */
export function logError(thrown: unknown): LogError {
  return describeThrown(thrown);
}

/** Longest error message a line carries: enough for ours, short of a pasted body. */
export const LOG_MESSAGE_LIMIT = 512;

/**
 * A third-party error's message may embed a stack trace or a whole response body: a line drops
 * stack frames (`    at …`), joins the rest onto one line (our config errors list their
 * problems one per line) and caps it, so neither a trace nor a body reaches the logs through it.
 */
function boundedMessage(message: string): string {
  const kept = message
    .split('\n')
    .filter((line) => !/^\s*at\s/.test(line))
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' ');
  return kept.length <= LOG_MESSAGE_LIMIT ? kept : `${kept.slice(0, LOG_MESSAGE_LIMIT)}…`;
}

function described(error: unknown): LogError {
  try {
    if (error instanceof Error || typeof error !== 'object' || error === null || typeof (error as LogError).name !== 'string') return describeThrown(error);
    const { name, code, message } = error as LogError;
    return { name, ...(typeof code === 'string' ? { code } : {}), ...(typeof message === 'string' ? { message } : {}) };
  } catch {
    // A value nothing can inspect (e.g. a revoked proxy: even instanceof throws).
    return describeThrown(error);
  }
}

/** A thrown value, or one already described (`describeError`): only its name, code and (bounded) message. */
function errorOf(error: unknown): LogError {
  const { message, ...rest } = described(error);
  return typeof message === 'string' ? { ...rest, message: boundedMessage(message) } : rest;
}

export function formatLogLine(input: LogLineInput): string {
  const line: Record<string, unknown> = { level: input.level, msg: input.msg, deployment: input.deployment, timestamp: input.timestamp };
  for (const field of CONTEXT_FIELDS) if (input[field] !== undefined) line[field] = input[field];
  if (input.stoppedForDeadline !== undefined) line.stoppedForDeadline = input.stoppedForDeadline;
  for (const [name, value] of Object.entries(input.counters ?? {})) if (value !== undefined) line[name] = value;
  if (input.error !== undefined) line.error = errorOf(input.error);
  if (input.detail !== undefined) line.detail = input.detail;
  if (input.emf) {
    Object.assign(line, input.emf.dimensions);
    line._aws = {
      Timestamp: input.timestamp,
      CloudWatchMetrics: [
        {
          Namespace: input.emf.namespace,
          Dimensions: [Object.keys(input.emf.dimensions)],
          Metrics: input.emf.metrics.map((m) => ({ Name: m.name, Unit: m.unit })),
        },
      ],
    };
  }
  return JSON.stringify(line);
}

export interface FailureContext {
  readonly deployment: string;
  readonly job: LogJob;
  readonly consumer?: string;
  readonly stream?: string;
  readonly group?: string;
  readonly now: () => number;
}

/**
 * The line for a job that failed or refused to start — the same on every platform:
 * `poll run failed` / `poll run refused to start`, `backlog probe failed`, …
 */
export function failureLine(context: FailureContext, error: unknown): string {
  const described = describeThrown(error);
  // Not enough time left is expected under load: a warning, not an error.
  const refused = described.code === 'RUN_DEADLINE_TOO_CLOSE';
  const what = context.job === 'backlog' ? 'backlog probe' : context.job === 'publish' ? 'publish API' : `${context.job} run`;
  return formatLogLine({
    level: refused ? 'warn' : 'error',
    msg: refused ? `${what} refused to start` : `${what} failed`,
    deployment: context.deployment,
    timestamp: context.now(),
    job: context.job,
    consumer: context.consumer,
    stream: context.stream,
    group: context.group,
    error,
  });
}

// ---- validation -------------------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const STACK_FRAME = /\n\s+at /;

function errorProblems(value: unknown): string[] {
  if (!isObject(value)) return ['error: must be an object {name, code?, message?}'];
  const problems: string[] = [];
  for (const key of Object.keys(value)) if (!['name', 'code', 'message'].includes(key)) problems.push(`error.${key}: not allowed (name, code, message only)`);
  if (typeof value.name !== 'string' || value.name === '') problems.push('error.name: must be a non-empty string');
  for (const key of ['code', 'message'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') problems.push(`error.${key}: must be a string`);
  }
  if (typeof value.message === 'string' && STACK_FRAME.test(value.message)) problems.push('error.message: holds a stack trace');
  return problems;
}

function fieldProblems(key: string, value: unknown): string[] {
  if (key === 'level') return LOG_LEVELS.includes(value as LogLevel) ? [] : [`level: must be one of ${LOG_LEVELS.join(', ')}`];
  if (key === 'msg') return typeof value === 'string' && value !== '' && !value.includes('\n') ? [] : ['msg: must be a one-line non-empty string'];
  if (key === 'deployment') return typeof value === 'string' && value !== '' ? [] : ['deployment: must be a non-empty string'];
  if (key === 'timestamp') return Number.isSafeInteger(value) && (value as number) > 0 ? [] : ['timestamp: must be epoch milliseconds'];
  if (key === 'job') return LOG_JOBS.includes(value as LogJob) ? [] : [`job: must be one of ${LOG_JOBS.join(', ')}`];
  if ((CONTEXT_FIELDS as readonly string[]).includes(key) || (EMF_DIMENSIONS as readonly string[]).includes(key)) {
    return typeof value === 'string' && value !== '' ? [] : [`${key}: must be a non-empty string`];
  }
  if (isCounterField(key)) return Number.isFinite(value) ? [] : [`${key}: must be a finite number`];
  if (key === 'stoppedForDeadline') return typeof value === 'boolean' ? [] : [`${key}: must be a boolean`];
  if (key === 'error') return errorProblems(value);
  if (key === 'detail') return isObject(value) ? [] : ['detail: must be an object'];
  if (key === '_aws') return isObject(value) && Number.isFinite(value.Timestamp) && Array.isArray(value.CloudWatchMetrics) ? [] : ['_aws: must be an EMF block'];
  return [`${key}: not a field of the log-line schema`];
}

/** Every way `line` (a JSON text or its parsed value) breaks the schema; empty when it conforms. */
export function logLineProblems(line: unknown): string[] {
  let value = line;
  if (typeof line === 'string') {
    try {
      value = JSON.parse(line);
    } catch {
      return ['not JSON'];
    }
  }
  if (!isObject(value)) return ['not a JSON object'];
  const problems: string[] = [];
  for (const required of ['level', 'msg', 'deployment', 'timestamp']) if (!(required in value)) problems.push(`${required}: missing`);
  for (const [key, field] of Object.entries(value)) problems.push(...fieldProblems(key, field));
  if ('_aws' in value && !EMF_DIMENSIONS.some((d) => d in value)) problems.push('_aws: without its dimension fields');
  return problems;
}
