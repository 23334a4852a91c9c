/**
 * Saga timeouts (SPEC §5.6): "if the result of this command has not come by then, act as if
 * the step failed". A timeout is a **result to self**: a result envelope for the command's
 * step, `outcome: 'failed'`, `error.code: 'step_timed_out'`, signed by the orchestrator's own
 * identity and scheduled onto the stream its results consumer reads. So it reaches the
 * orchestrator exactly like a participant's answer — through the same consumer, the same
 * inbox, the same per-instance order — and the state machine's usual question, "is this the
 * result I am waiting for?", is all it takes to ignore a timeout that fires after the step
 * completed: the step has moved on, or the armed timeout id is not this one.
 *
 * Its event_id is derived from the command's (`<command_id>:timeout`): publishing or
 * enqueueing it again is a duplicate (publish dedupe, the schedule, the outbox's unique
 * event_id, the consumer's inbox), and the completing transaction can name it to cancel it.
 *
 * With a database — arm and cancel in the step's own transactions:
 *   await outbox.enqueue(tx, stepTimeout({ command, afterMs: 30_000, eventType, producer }));
 *   …  // the result arrives, in the transaction that records it:
 *   await outbox.enqueueCancel(tx, stepTimeoutRef({ command, eventType, producer }));
 * Without one — straight through the publisher, after the step's commit (in no transaction:
 * see docs/guarantees.md, "Saga timeouts"); a StepTimeout is a PublishEvent carrying its
 * `deliverAt`, and its ref names what `cancelScheduled` takes:
 *   await publisher.publish(stepTimeout({ command, afterMs: 30_000, eventType, producer }));
 *   await cancelScheduled(port, resultsStream, stepTimeoutRef({ command, eventType, producer }).eventId);
 */
import { isValidEventId } from '../entry/keys';
import { flowKeyIfUsable } from '../publish/entry-fields';
import { MAX_SCHEDULE_DELAY_MS } from '../schedule/due-time';
import { IN_ENGLISH } from '../ground/zod-messages';
import { resultEnvelopeSchema, type CommandEnvelope, type ResultEnvelope } from './envelopes';

/** `error.code` of a timeout result. */
export const STEP_TIMED_OUT = 'step_timed_out';
/** A timeout's event_id is its command's id followed by this. */
export const STEP_TIMEOUT_SUFFIX = ':timeout';

/** The command whose result is awaited: its identity and route (a CommandEnvelope fits). */
export type TimedCommand = Pick<CommandEnvelope, 'command_id' | 'instance_id' | 'workflow' | 'definition_version' | 'definition_digest' | 'step' | 'action'>;

export interface StepTimeoutTarget {
  readonly command: TimedCommand;
  /** The timeout's event type: routed to the stream the orchestrator reads its results from. */
  readonly eventType: string;
  /** Who signs it: the orchestrator's own identity (its results consumer's `timeoutProducer`). */
  readonly producer: string;
}

export interface StepTimeoutSpec extends StepTimeoutTarget {
  /** Due this many ms after `now()` (> 0). Give this or `deliverAt`. */
  readonly afterMs?: number;
  /** Due at this instant (a Date or ms since the epoch); a past instant fires at once. */
  readonly deliverAt?: Date | number;
  /** The furthest a timeout may be due, ms: pass your publisher's `config.maxDelayMs` (default 365 days). */
  readonly maxDelayMs?: number;
  /** The clock `afterMs` counts from and `completed_at` is written with (default Date.now). */
  readonly now?: () => number;
}

/** Enough to cancel a timeout: fits `outbox.enqueueCancel` and `cancelStepTimeout`. */
export interface StepTimeoutRef {
  readonly producer: string;
  readonly eventType: string;
  readonly eventId: string;
  /** The instance: the timeout and its cancel go through the outbox in the instance's order. */
  readonly orderingKey: string;
}

/** The timeout event: fits `outbox.enqueue` (an OutboxEvent) and `publisher.publish` (a PublishEvent, due at `deliverAt`). */
export interface StepTimeout extends StepTimeoutRef {
  /** The result envelope, JSON. */
  readonly payload: string;
  /**
   * The instance id as the entry's flow key (SPEC §5.7) when published directly; the outbox
   * relay publishes the ordering key as the flow key. Absent for an id no flow key can hold.
   */
  readonly flowKey?: string;
  /** Due instant, ms since the epoch. */
  readonly deliverAt: number;
}

/** Bad input for a timeout, before anything is written; `field` names it (`afterMs`, `command.step`, …). */
export class SagaTimeoutError extends TypeError {
  readonly code = 'SAGA_TIMEOUT_INVALID';
  readonly field: string;

  constructor(field: string, message: string) {
    super(`saga timeout ${field}: ${message}`);
    this.name = 'SagaTimeoutError';
    this.field = field;
  }
}

function nonEmpty(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new SagaTimeoutError(field, 'must be a non-empty string');
  return value;
}

/** The event_id of the timeout guarding `command`. */
export function stepTimeoutId(command: Pick<TimedCommand, 'command_id'>): string {
  const id = `${nonEmpty(command?.command_id, 'command.command_id')}${STEP_TIMEOUT_SUFFIX}`;
  if (!isValidEventId(id)) {
    throw new SagaTimeoutError('command.command_id', `its timeout's event_id ("<command_id>${STEP_TIMEOUT_SUFFIX}") must be 1..=256 printable ASCII characters without spaces`);
  }
  return id;
}

export function stepTimeoutRef(target: StepTimeoutTarget): StepTimeoutRef {
  return {
    producer: nonEmpty(target.producer, 'producer'),
    eventType: nonEmpty(target.eventType, 'eventType'),
    eventId: stepTimeoutId(target.command),
    orderingKey: nonEmpty(target.command.instance_id, 'command.instance_id'),
  };
}

function maxDelayOf(spec: StepTimeoutSpec): number {
  const max = spec.maxDelayMs ?? MAX_SCHEDULE_DELAY_MS;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_SCHEDULE_DELAY_MS) {
    throw new SagaTimeoutError('maxDelayMs', `must be an integer in 1..=${MAX_SCHEDULE_DELAY_MS}`);
  }
  return max;
}

/** The due instant, ms since the epoch (rounded up: never early). */
function dueOf(spec: StepTimeoutSpec, now: number): number {
  const max = maxDelayOf(spec);
  const { afterMs, deliverAt } = spec;
  if ((afterMs === undefined) === (deliverAt === undefined)) throw new SagaTimeoutError('afterMs', 'give afterMs or deliverAt, exactly one');
  if (afterMs !== undefined) {
    if (typeof afterMs !== 'number' || !Number.isFinite(afterMs) || afterMs <= 0) throw new SagaTimeoutError('afterMs', 'must be a finite number of ms > 0');
    if (afterMs > max) throw new SagaTimeoutError('afterMs', `must be at most maxDelayMs (${max} ms)`);
    return Math.ceil(now + afterMs);
  }
  const at = deliverAt instanceof Date ? deliverAt.getTime() : deliverAt;
  if (typeof at !== 'number' || !Number.isFinite(at)) throw new SagaTimeoutError('deliverAt', 'must be a valid Date or a finite number of ms since the epoch');
  if (at - now > max) throw new SagaTimeoutError('deliverAt', `must be at most maxDelayMs (${max} ms) from now`);
  return Math.max(0, Math.ceil(at));
}

/** The timeout event for `spec.command`, due `afterMs` from now or at `deliverAt`. */
export function stepTimeout(spec: StepTimeoutSpec): StepTimeout {
  const ref = stepTimeoutRef(spec);
  const due = dueOf(spec, (spec.now ?? Date.now)());
  const { command } = spec;
  const envelope = {
    result_id: ref.eventId,
    instance_id: command.instance_id,
    workflow: command.workflow,
    definition_version: command.definition_version,
    definition_digest: command.definition_digest,
    step: command.step,
    action: command.action,
    outcome: 'failed' as const,
    error: { code: STEP_TIMED_OUT, message: `no result for ${command.step} (${command.action}) by ${new Date(due).toISOString()}` },
    completed_at: new Date(due).toISOString(),
  };
  const parsed = resultEnvelopeSchema.safeParse(envelope, IN_ENGLISH);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SagaTimeoutError(`command.${issue.path.join('.')}`, issue.message);
  }
  return { ...ref, payload: JSON.stringify(parsed.data), deliverAt: due, ...flowKeyIfUsable(ref.orderingKey) };
}

/**
 * Whether `result` is a step timeout (rather than a participant's answer). Trust it only
 * from the timeout producer: the result consumer's `timeoutProducer` gate makes sure of that.
 */
export function isStepTimeout(result: Pick<ResultEnvelope, 'result_id' | 'outcome' | 'error'>): boolean {
  return result.outcome === 'failed' && result.error?.code === STEP_TIMED_OUT && result.result_id.endsWith(STEP_TIMEOUT_SUFFIX);
}
