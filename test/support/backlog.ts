/** Backlog fixtures: a probe's result for unit tests of what renders it, and a plan to probe a consumer by. */
import type { ConsumerConfig } from '../../src/consume/config';
import type { ConsumerPlan } from '../../src/deployment/define-config';
import type { Backlog } from '../../src/probes/backlog';

/** A backlog probe's result for unit tests of what renders it (log lines, the dashboard): 3 pending, nothing else of note. */
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

/** A deployment's plan of one consumer, for probing its backlog (consumerBacklog): no handler is ever built. */
export function probePlan(name: string, config: ConsumerConfig): ConsumerPlan {
  const handler = {
    kind: 'entries' as const,
    build: () => {
      throw new Error('a backlog probe builds no poller');
    },
  };
  return { name, config, schedule: undefined, wakeUp: false, mode: 'drain', publishesAs: [], handler };
}
