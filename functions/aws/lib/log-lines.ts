/**
 * Log lines for what a run report cannot say: a run that refused to start or failed.
 * Same shape as the report lines (one JSON object, low-cardinality fields). Messages of
 * this library's errors never carry secrets; anything else is summarised by its code.
 */
import { errorCode } from '../../../src/ground/errors';

export interface LineContext {
  readonly deployment: string;
  readonly job: 'poll' | 'trim' | 'publish' | 'backlog' | 'relay';
  readonly consumer?: string;
  readonly now: () => number;
}

/** Not enough time left is expected under load: a warning, not an error. */
const WARNINGS = new Set(['RUN_DEADLINE_TOO_CLOSE']);

export function problemLine(context: LineContext, error: unknown): string {
  const code = errorCode(error) ?? 'UNEXPECTED';
  const refused = code === 'RUN_DEADLINE_TOO_CLOSE';
  return JSON.stringify({
    level: WARNINGS.has(code) ? 'warn' : 'error',
    msg: refused ? `${context.job} run refused to start` : `${context.job} run failed`,
    deployment: context.deployment,
    job: context.job,
    ...(context.consumer === undefined ? {} : { consumer: context.consumer }),
    timestamp: context.now(),
    code,
    error: error instanceof Error ? error.message : 'non-error thrown',
  });
}
