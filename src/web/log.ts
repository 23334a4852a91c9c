/**
 * The publish API's log lines: one JSON object per line, low-cardinality fields, and for
 * errors only their name, code and message — never a stack trace, a header or a body, so
 * tokens and payloads cannot reach the log.
 */
import { describeThrown } from '../ground/errors';

export type LogSink = (line: string) => void;

export interface Logger {
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** What a log line may say about an error (this library's messages carry no secrets). */
export function describeError(error: unknown): Record<string, unknown> {
  return { ...describeThrown(error) };
}

export function createLogger(sink: LogSink, now: () => number): Logger {
  const write = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
    sink(JSON.stringify({ level, msg, component: 'publish-api', timestamp: now(), ...fields }));
  return {
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}
