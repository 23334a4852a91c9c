/**
 * The publish API's log lines, in the shared schema (src/deployment/log-line.ts) with
 * `component: "publish-api"`; for errors only their name, code and message — never a stack
 * trace, a header or a body, so tokens and payloads cannot reach the log.
 */
import { describeThrown } from '../ground/errors';
import { formatLogLine, type LogLevel } from '../deployment/log-line';

export type LogSink = (line: string) => void;

export interface Logger {
  /** `detail`: small, low-cardinality facts (touched streams, failed check names). */
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export interface LogFields {
  readonly error?: unknown;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** What a log line may say about an error (this library's messages carry no secrets). */
export function describeError(error: unknown): Record<string, unknown> {
  return { ...describeThrown(error) };
}

export function createLogger(sink: LogSink, now: () => number, deployment: string): Logger {
  const write = (level: LogLevel, msg: string, fields: LogFields = {}) =>
    sink(formatLogLine({ level, msg, deployment, timestamp: now(), component: 'publish-api', job: 'publish', error: fields.error, detail: fields.detail }));
  return {
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}
