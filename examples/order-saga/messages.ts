/**
 * Building the example's envelopes (SPEC §9), which handlers put in the outbox. Ids are
 * derived, never random, so a re-publication by the relay carries the same ids and the
 * receiving inbox (or the publish dedupe window) turns it into a duplicate.
 */
import { encodeCommand, encodeResult, stepTimeout, stepTimeoutRef, type CommandEnvelope, type StepTimeout } from 'saga-streams';
import { EventTypes, ORDER_SAGA, ORDER_SAGA_DIGEST, Producers } from './definition';

const text = new TextDecoder();

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A follow-up event decided inside a transaction (enqueued in the outbox with it). */
export interface OutgoingEvent {
  readonly eventType: string;
  readonly eventId: string;
  /** JSON text (an encoded saga envelope). */
  readonly payload: string;
}

export type Action = 'execute' | 'compensate';

export interface CommandSpec {
  readonly instanceId: string;
  readonly step: string;
  readonly action: Action;
  readonly input: Json;
}

/** The event type a step's action is sent as (from the definition). */
export function commandEventType(step: string, action: Action): string {
  const spec = ORDER_SAGA.steps.find((s) => s.step === step);
  const eventType = spec === undefined ? undefined : action === 'execute' ? spec.execute : 'compensate' in spec ? spec.compensate : undefined;
  if (eventType === undefined) throw new TypeError(`step ${step} has no ${action} action in the order saga`);
  return eventType;
}

/** The command envelope for `spec`; its id is derived from instance, step and action. */
export function commandEnvelope(spec: CommandSpec, now: Date): CommandEnvelope {
  return {
    command_id: `${spec.instanceId}:${spec.step}:${spec.action}`,
    instance_id: spec.instanceId,
    workflow: ORDER_SAGA.workflow,
    definition_version: ORDER_SAGA.version,
    definition_digest: ORDER_SAGA_DIGEST,
    step: spec.step,
    action: spec.action,
    issued_at: now.toISOString(),
    input: spec.input,
  };
}

export function commandEvent(spec: CommandSpec, now: Date): OutgoingEvent {
  const envelope = commandEnvelope(spec, now);
  return { eventType: commandEventType(spec.step, spec.action), eventId: envelope.command_id, payload: text.decode(encodeCommand(envelope)) };
}

/** Who signs the example's timeouts, and the event type that routes them to the results stream. */
const TIMEOUTS = { producer: Producers.orchestrator, eventType: EventTypes.stepTimeout } as const;

/**
 * The timeout guarding `spec`'s command: a failed result (`step_timed_out`) for its step,
 * due `afterMs` from `now`, which the orchestrator schedules to itself through the outbox.
 */
export function timeoutEvent(spec: CommandSpec, afterMs: number, now: Date): StepTimeout {
  return stepTimeout({ ...TIMEOUTS, command: commandEnvelope(spec, now), afterMs, now: () => now.getTime() });
}

/** The event_id of the timeout guarding `spec`'s command (what the state remembers, to accept it or cancel it). */
export function timeoutIdOf(spec: CommandSpec): string {
  return stepTimeoutRef({ ...TIMEOUTS, command: commandEnvelope(spec, new Date(0)) }).eventId;
}

/** What `outbox.enqueueCancel` needs to cancel the timeout `eventId` of `instanceId`. */
export function timeoutCancel(instanceId: string, eventId: string) {
  return { ...TIMEOUTS, eventId, orderingKey: instanceId };
}

export type StepOutcome =
  | { readonly outcome: 'succeeded'; readonly output: Json }
  | { readonly outcome: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/** The result a participant reports for `command`, as its `resultEventType`. */
export function resultEvent(resultEventType: string, command: CommandEnvelope, outcome: StepOutcome, now: Date): OutgoingEvent {
  const resultId = `${command.command_id}:result`;
  const payload = encodeResult({
    result_id: resultId,
    instance_id: command.instance_id,
    workflow: command.workflow,
    definition_version: command.definition_version,
    definition_digest: command.definition_digest,
    step: command.step,
    action: command.action,
    ...outcome,
    completed_at: now.toISOString(),
  });
  return { eventType: resultEventType, eventId: resultId, payload: text.decode(payload) };
}
