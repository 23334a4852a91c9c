/**
 * CloudWatch metric names the alarms use, as the functions emit them in Embedded Metric
 * Format (namespace and dimensions from src/deployment/log.ts; poll metrics named as the
 * run report fields, backlog metrics as the backlog line's fields).
 */
export { DIMENSION_CONSUMER, DIMENSION_DEPLOYMENT, METRIC_NAMESPACE } from '../../../src/deployment/log';

export const Metrics = {
  /** Emitted by the trim function per consumer (backlog probe), ms. */
  oldestPendingAgeMs: 'oldestPendingAgeMs',
  pending: 'pending',
  lag: 'lag',
  deadLetters: 'deadLetters',
  consumers: 'consumers',
  /** Keys closed behind their head past config flow.closedAlertMs (consumers with flow control). */
  flowClosedOverAge: 'flowClosedOverAge',
  /** Emitted by every poll run (run report). */
  deletedPending: 'deletedPending',
  authRejected: 'authRejected',
  /** Emitted by every poll run: its sample count is the heartbeat ("poller not running"). */
  durationMs: 'durationMs',
} as const;
