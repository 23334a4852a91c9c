/**
 * Building the example's envelopes (SPEC §9), which handlers put in the outbox. Ids are
 * derived, never random, so a re-publication by the relay carries the same ids and the
 * receiving inbox (or the publish dedupe window) turns it into a duplicate.
 */
import { encodeCommand, encodeResult, type CommandEnvelope } from 'saga-streams';
import { ORDER_SAGA, ORDER_SAGA_DIGEST } from './definition';

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

export function commandEvent(spec: CommandSpec, now: Date): OutgoingEvent {
  const commandId = `${spec.instanceId}:${spec.step}:${spec.action}`;
  const payload = encodeCommand({
    command_id: commandId,
    instance_id: spec.instanceId,
    workflow: ORDER_SAGA.workflow,
    definition_version: ORDER_SAGA.version,
    definition_digest: ORDER_SAGA_DIGEST,
    step: spec.step,
    action: spec.action,
    issued_at: now.toISOString(),
    input: spec.input,
  });
  return { eventType: commandEventType(spec.step, spec.action), eventId: commandId, payload: text.decode(payload) };
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
