/**
 * Saga timeouts, the pure parts (src/saga/timeouts.ts): the timeout event a command gets —
 * a failed result envelope for its step with a derived event_id and its due instant — the
 * typed errors naming the field for bad input, the result consumer's `timeoutProducer` gate,
 * and the outbox refusing a bad due time (with the publisher's error for it) before it sends
 * any SQL.
 */
import { describe, expect, it } from 'vitest';
import { Verdicts } from '../../src/verdict/verdict';
import { DeadLetterReasons } from '../../src/auth/reasons';
import { createOutbox } from '../../src/postgres/outbox';
import { PublishError } from '../../src/publish/errors';
import type { SqlTx } from '../../src/postgres/sql';
import { parseTables } from '../../src/postgres/tables';
import { resultEnvelopeSchema, type ResultEnvelope } from '../../src/saga/envelopes';
import { producerGate } from '../../src/saga/result-consumer';
import { isStepTimeout, SagaTimeoutError, STEP_TIMED_OUT, stepTimeout, stepTimeoutRef, type StepTimeoutSpec, type TimedCommand } from '../../src/saga/timeouts';
import { MAX_SCHEDULE_DELAY_MS } from '../../src/schedule/due-time';

const command: TimedCommand = {
  command_id: 'order-1:charge:execute',
  instance_id: 'order-1',
  workflow: 'order',
  definition_version: 1,
  definition_digest: 'a'.repeat(64),
  step: 'charge',
  action: 'execute',
};
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const spec = (over: Partial<StepTimeoutSpec> = {}): StepTimeoutSpec => ({
  command,
  eventType: 'order.step-timeout',
  producer: 'orchestrator',
  afterMs: 30_000,
  now: () => NOW,
  ...over,
});

/** The SagaTimeoutError `build` throws, or a failure naming what it did instead. */
function refusal(build: () => unknown): SagaTimeoutError {
  try {
    build();
  } catch (error) {
    if (error instanceof SagaTimeoutError) return error;
    throw error;
  }
  throw new Error('expected a SagaTimeoutError, nothing was thrown');
}

describe('stepTimeout', () => {
  it('is a failed result for the command\'s step, due afterMs from now, with an id derived from the command', () => {
    const timeout = stepTimeout(spec());
    expect(timeout).toMatchObject({
      producer: 'orchestrator',
      eventType: 'order.step-timeout',
      eventId: 'order-1:charge:execute:timeout',
      orderingKey: 'order-1',
      flowKey: 'order-1',
      deliverAt: NOW + 30_000,
    });
    const envelope = resultEnvelopeSchema.parse(JSON.parse(timeout.payload));
    expect(envelope).toMatchObject({
      result_id: 'order-1:charge:execute:timeout',
      instance_id: 'order-1',
      workflow: 'order',
      definition_version: 1,
      definition_digest: 'a'.repeat(64),
      step: 'charge',
      action: 'execute',
      outcome: 'failed',
      error: { code: STEP_TIMED_OUT },
      completed_at: new Date(NOW + 30_000).toISOString(),
    });
    expect(isStepTimeout(envelope)).toBe(true);
    // The same command gives the same event every time: repeats are duplicates downstream.
    expect(stepTimeout(spec())).toEqual(timeout);
    expect(stepTimeoutRef(spec())).toEqual({ producer: 'orchestrator', eventType: 'order.step-timeout', eventId: timeout.eventId, orderingKey: 'order-1' });
  });

  it('carries the instance id as its flow key only when a flow key can hold it', () => {
    // Every id the envelope admits (≤ 256 characters) fits a flow key's 1024 bytes; a lone
    // surrogate has no UTF-8 bytes, so it would arrive as another key: left out, not refused.
    const unpaired = 'order-\ud800';
    const timeout = stepTimeout(spec({ command: { ...spec().command, command_id: 'order-x:charge:execute', instance_id: unpaired } }));
    expect(timeout.orderingKey).toBe(unpaired);
    expect(timeout).not.toHaveProperty('flowKey');
    expect(stepTimeout(spec({ command: { ...spec().command, instance_id: '✓'.repeat(256) } })).flowKey).toBe('✓'.repeat(256));
  });

  it('takes an instant instead, a past one included (it fires at once), rounding fractions up', () => {
    expect(stepTimeout(spec({ afterMs: undefined, deliverAt: new Date(NOW + 5_000) })).deliverAt).toBe(NOW + 5_000);
    expect(stepTimeout(spec({ afterMs: undefined, deliverAt: NOW - 60_000 })).deliverAt).toBe(NOW - 60_000);
    expect(stepTimeout(spec({ afterMs: 0.2 })).deliverAt).toBe(NOW + 1);
  });

  it('refuses bad input with a typed error naming the field', () => {
    const cases: Array<[Partial<StepTimeoutSpec>, string]> = [
      [{ afterMs: -1 }, 'afterMs'],
      [{ afterMs: 0 }, 'afterMs'],
      [{ afterMs: Number.NaN }, 'afterMs'],
      [{ afterMs: Number.POSITIVE_INFINITY }, 'afterMs'],
      [{ afterMs: MAX_SCHEDULE_DELAY_MS + 1 }, 'afterMs'],
      [{ afterMs: 60_001, maxDelayMs: 60_000 }, 'afterMs'],
      [{ afterMs: undefined }, 'afterMs'],
      [{ deliverAt: NOW + 1 }, 'afterMs'],
      [{ afterMs: undefined, deliverAt: new Date(Number.NaN) }, 'deliverAt'],
      [{ afterMs: undefined, deliverAt: NOW + 60_001, maxDelayMs: 60_000 }, 'deliverAt'],
      [{ maxDelayMs: 0 }, 'maxDelayMs'],
      [{ maxDelayMs: MAX_SCHEDULE_DELAY_MS + 1 }, 'maxDelayMs'],
      [{ producer: '' }, 'producer'],
      [{ eventType: '' }, 'eventType'],
      [{ command: { ...command, command_id: 'x'.repeat(249) } }, 'command.command_id'],
      [{ command: { ...command, command_id: 'has space' } }, 'command.command_id'],
      [{ command: { ...command, instance_id: '' } }, 'command.instance_id'],
      [{ command: { ...command, definition_digest: 'not-hex' } }, 'command.definition_digest'],
      [{ command: { ...command, definition_version: 0 } }, 'command.definition_version'],
    ];
    for (const [over, field] of cases) {
      const error = refusal(() => stepTimeout(spec(over)));
      expect({ over, field: error.field, code: error.code }).toEqual({ over, field, code: 'SAGA_TIMEOUT_INVALID' });
      expect(error.message).toContain(field);
    }
    // The longest command id whose timeout id still fits the 256-character event_id rule.
    expect(stepTimeout(spec({ command: { ...command, command_id: 'x'.repeat(248) } })).eventId).toHaveLength(256);
  });
});

describe('isStepTimeout', () => {
  const result = (over: Partial<ResultEnvelope>): ResultEnvelope => ({
    result_id: 'order-1:charge:execute:result',
    instance_id: 'order-1',
    workflow: 'order',
    definition_version: 1,
    definition_digest: 'a'.repeat(64),
    step: 'charge',
    action: 'execute',
    outcome: 'succeeded',
    completed_at: new Date(NOW).toISOString(),
    ...over,
  });

  it('is a failed result with the timeout code and a timeout id, and nothing else', () => {
    expect(isStepTimeout(result({ result_id: 'c:timeout', outcome: 'failed', error: { code: STEP_TIMED_OUT, message: '' } }))).toBe(true);
    expect(isStepTimeout(result({ outcome: 'failed', error: { code: STEP_TIMED_OUT, message: '' } }))).toBe(false);
    expect(isStepTimeout(result({ result_id: 'c:timeout', outcome: 'failed', error: { code: 'charge_declined', message: '' } }))).toBe(false);
    expect(isStepTimeout(result({ result_id: 'c:timeout' }))).toBe(false);
  });
});

describe('the result consumer\'s timeoutProducer gate', () => {
  const timeout = resultEnvelopeSchema.parse(JSON.parse(stepTimeout(spec()).payload));
  const answer = { ...timeout, result_id: 'order-1:charge:execute:result', outcome: 'succeeded' as const, error: undefined };
  const refused = Verdicts.deadLetter(DeadLetterReasons.producerNotAllowed, { auth: true });

  it('admits timeouts from the timeout producer only, and nothing else from it', () => {
    const gate = producerGate({ charge: ['payment'] }, 'orchestrator');
    expect(gate(timeout, 'orchestrator')).toBeUndefined();
    expect(gate(answer, 'payment')).toBeUndefined();
    // The orchestrator's key cannot forge a participant's answer…
    expect(gate(answer, 'orchestrator')).toEqual(refused);
    // …nor a participant's fake a timeout (even for its own step).
    expect(gate(timeout, 'payment')).toEqual(refused);
    // A timeout needs no allowedProducers entry for its step.
    expect(producerGate({}, 'orchestrator')(timeout, 'orchestrator')).toBeUndefined();
    expect(producerGate(undefined, 'orchestrator')(answer, 'anyone')).toBeUndefined();
  });

  it('without timeoutProducer, timeouts are results like any other', () => {
    expect(producerGate({ charge: ['payment'] })(timeout, 'payment')).toBeUndefined();
    expect(producerGate({ charge: ['payment'] })(timeout, 'orchestrator')).toEqual(refused);
  });
});

describe('the outbox refuses a bad due time or cancel before sending anything', () => {
  const tables = parseTables({});
  const sent: Array<readonly unknown[]> = [];
  const tx: SqlTx = { query: async (_text, params = []) => (sent.push(params), [{ enqueued: 1 }] as never) };
  const event = { producer: 'p', eventType: 'e', eventId: 'id-1', payload: '{}' };

  it('names the option, as the publisher does, and writes nothing', async () => {
    const outbox = createOutbox(tables);
    const cases: Array<[object, string]> = [
      [{ deliverAt: Date.now() + MAX_SCHEDULE_DELAY_MS + 3_600_000 }, 'deliverAt'],
      [{ deliverAt: new Date(Number.NaN) }, 'deliverAt'],
      [{ delayMs: -5 }, 'delayMs'],
      [{ delayMs: Number.NaN }, 'delayMs'],
      [{ delayMs: MAX_SCHEDULE_DELAY_MS + 1 }, 'delayMs'],
      [{ delayMs: 1, deliverAt: Date.now() }, 'deliverAt'],
    ];
    for (const [over, field] of cases) {
      const outcome = await outbox.enqueue(tx, { ...event, ...over } as never).then(
        () => 'enqueued',
        (error: unknown) => (error instanceof PublishError ? { field: error.field, code: error.code } : error),
      );
      expect({ over, outcome }).toEqual({ over, outcome: { field, code: 'PUBLISH_SCHEDULE_INVALID' } });
    }
    await expect(outbox.enqueueCancel(tx, { producer: 'p', eventType: 'e', eventId: 'has space' })).rejects.toMatchObject({ code: 'PUBLISH_EVENT_INVALID', field: 'event_id' });
    await expect(outbox.enqueueCancel(tx, { producer: '', eventType: 'e', eventId: 'id' })).rejects.toThrow('producer');
    expect(sent).toEqual([]);
    // Valid ones are sent: the fake is not refusing everything. delayMs becomes an instant.
    const before = Date.now();
    expect(await outbox.enqueue(tx, { ...event, delayMs: 60_000 })).toBe('enqueued');
    const after = Date.now();
    expect(await outbox.enqueueCancel(tx, { producer: 'p', eventType: 'e', eventId: 'id-1' })).toBe('enqueued');
    expect(sent).toHaveLength(2);
    const [due, cancels] = sent[0]!.slice(6) as [number, null];
    expect(due).toBeGreaterThanOrEqual(before + 60_000);
    expect(due).toBeLessThanOrEqual(after + 60_000);
    expect(cancels).toBeNull();
    expect(sent[1]!.slice(2)).toEqual(['cancel id-1', new Uint8Array(0), null, null, null, 'id-1']);
  });
});
