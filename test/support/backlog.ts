/** A backlog probe's result for unit tests of what renders it (log lines, the dashboard): 3 pending, nothing else of note. */
import type { Backlog } from '../../src/probes/backlog';

export const SAMPLE_BACKLOG: Backlog = {
  pending: 3,
  oldestPendingId: '1-0',
  oldestPendingAgeMs: 120_000,
  oldestPendingDeliveries: 4,
  consumers: 1,
  lag: 0,
  lastDeliveredId: '3-0',
  streamLength: 3,
  deadLetters: 0,
  scheduled: 0,
  scheduledNextDueAt: undefined,
  observedAtMs: 1_000_000,
};
