/**
 * The example saga's state machine with its payment timeout (examples/order-saga/
 * state-machine.ts), pure: issuing the charge arms the timeout, the charge's answer cancels
 * it, the armed timeout fired while the charge is awaited compensates the order, a timeout
 * that fires after the answer (or any other timeout) changes nothing, and the charge's late
 * answer is refunded once. The same behaviour over real Postgres and Redis is in
 * test/local/order-saga.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PAY_WITHIN_S } from 'order-saga-example';
import { commandEnvelope, timeoutEvent } from '../../examples/order-saga/messages';
import { finishedNews, onResult, start, type OrderState, type Transition } from '../../examples/order-saga/state-machine';
import { resultEnvelopeSchema, type ResultEnvelope } from '../../src/saga/envelopes';

const NOW = new Date(Date.UTC(2026, 11, 1, 12));
const order = { order_id: 'o-1', sku: 'sku-espresso', qty: 1, amount_cents: 1_200, pay_within_s: 30 };

/** The result a participant reports for the command of `step` / `action` of `state`'s order. */
function answer(state: OrderState, step: string, action: 'execute' | 'compensate', outcome: 'succeeded' | 'failed'): ResultEnvelope {
  const command = commandEnvelope({ instanceId: state.order_id, step, action, input: null }, NOW);
  const { issued_at: _issued, input: _input, command_id, ...route } = command;
  return {
    ...route,
    result_id: `${command_id}:result`,
    outcome,
    ...(outcome === 'failed' ? { error: { code: 'charge_declined', message: 'no' } } : { output: {} }),
    completed_at: NOW.toISOString(),
  };
}

/** The timeout the orchestrator scheduled for `state`'s charge, as it arrives. */
function firedTimeout(state: OrderState): ResultEnvelope {
  return resultEnvelopeSchema.parse(JSON.parse(timeoutEvent({ instanceId: state.order_id, step: 'charge', action: 'execute', input: null }, 30_000, NOW).payload));
}

function apply(state: OrderState, result: ResultEnvelope): Transition {
  const transition = onResult(state, result);
  if (!transition) throw new Error(`${result.result_id} was ignored`);
  return transition;
}

/** An order waiting for its charge's answer, its timeout armed. */
function awaitingCharge(): { state: OrderState; transition: Transition } {
  const reserved = apply(start(order).state, answer(start(order).state, 'reserve', 'execute', 'succeeded'));
  return { state: reserved.state, transition: reserved };
}

describe('the order saga\'s payment timeout', () => {
  it('is armed with the charge command (pay_within_s, the default without), and only there', () => {
    expect(start(order).arm).toBeUndefined();
    const { state, transition } = awaitingCharge();
    expect(transition.commands.map((c) => `${c.step}:${c.action}`)).toEqual(['charge:execute']);
    expect(transition.arm).toEqual({ step: 'charge', afterMs: 30_000 });
    expect(state.timeout).toBe('o-1:charge:execute:timeout');
    const { pay_within_s: _omitted, ...noWindow } = order;
    const reserved = apply(start(noWindow).state, answer(start(noWindow).state, 'reserve', 'execute', 'succeeded'));
    expect(reserved.arm).toEqual({ step: 'charge', afterMs: DEFAULT_PAY_WITHIN_S * 1_000 });
  });

  it('is cancelled by the charge\'s answer, success or failure', () => {
    const { state } = awaitingCharge();
    const charged = apply(state, answer(state, 'charge', 'execute', 'succeeded'));
    expect(charged.cancel).toBe('o-1:charge:execute:timeout');
    expect(charged.state.timeout).toBeUndefined();
    expect(charged.commands.map((c) => c.step)).toEqual(['ship']);
    const declined = apply(state, answer(state, 'charge', 'execute', 'failed'));
    expect(declined.cancel).toBe('o-1:charge:execute:timeout');
    expect(declined.commands.map((c) => `${c.step}:${c.action}`)).toEqual(['reserve:compensate']);
  });

  it('fired while the charge is awaited: the reservation is released and the order ends compensated, step_timed_out', () => {
    const { state } = awaitingCharge();
    const timedOut = apply(state, firedTimeout(state));
    expect(timedOut.state).toMatchObject({ status: 'compensating', step: 'reserve', timed_out: 'charge', failure: { code: 'step_timed_out' } });
    expect(timedOut.state.timeout).toBeUndefined();
    expect(timedOut.commands.map((c) => `${c.step}:${c.action}`)).toEqual(['reserve:compensate']);
    const released = apply(timedOut.state, answer(timedOut.state, 'reserve', 'compensate', 'succeeded'));
    expect(released.state).toMatchObject({ status: 'compensated', completed: [], failure: { code: 'step_timed_out' } });
    expect(finishedNews(timedOut.state, released.state)).toBe(true);
  });

  it('fired after the charge was answered: ignored, whatever state the order is in by then', () => {
    const { state } = awaitingCharge();
    const timeout = firedTimeout(state);
    const charged = apply(state, answer(state, 'charge', 'execute', 'succeeded'));
    expect(onResult(charged.state, timeout)).toBeUndefined();
    const shipped = apply(charged.state, answer(charged.state, 'ship', 'execute', 'succeeded'));
    expect(shipped.state.status).toBe('completed');
    expect(onResult(shipped.state, timeout)).toBeUndefined();
    const declined = apply(state, answer(state, 'charge', 'execute', 'failed'));
    expect(onResult(declined.state, timeout)).toBeUndefined();
    // Fired twice (a repeat the inbox would also catch): the second finds it disarmed.
    const timedOut = apply(state, timeout);
    expect(onResult(timedOut.state, timeout)).toBeUndefined();
  });

  it('only the armed timeout counts: another command\'s is stale', () => {
    const { state } = awaitingCharge();
    const other = { ...firedTimeout(state), result_id: 'o-1:charge:execute:retry-2:timeout' };
    expect(onResult(state, other)).toBeUndefined();
  });

  it('a late charge success is refunded once; a late failure leaves nothing to undo', () => {
    const { state } = awaitingCharge();
    const timedOut = apply(state, firedTimeout(state)).state;
    const late = answer(state, 'charge', 'execute', 'succeeded');
    const refunding = apply(timedOut, late);
    expect(refunding.commands.map((c) => `${c.step}:${c.action}`)).toEqual(['charge:compensate']);
    expect(refunding.state).toMatchObject({ status: 'compensating', late: 'refunding' });
    expect(onResult(refunding.state, late)).toBeUndefined();
    const refunded = apply(refunding.state, answer(state, 'charge', 'compensate', 'succeeded'));
    expect(refunded.state.late).toBe('refunded');
    expect(refunded.commands).toEqual([]);
    const failedLate = apply(timedOut, answer(state, 'charge', 'execute', 'failed'));
    expect(failedLate).toMatchObject({ commands: [], state: { late: 'nothing_to_undo' } });
  });

  it('a refund that fails leaves the order stuck for an operator', () => {
    const { state } = awaitingCharge();
    const compensated = apply(apply(state, firedTimeout(state)).state, answer(state, 'reserve', 'compensate', 'succeeded')).state;
    const refunding = apply(compensated, answer(state, 'charge', 'execute', 'succeeded')).state;
    expect(finishedNews(compensated, refunding)).toBe(false);
    const stuck = apply(refunding, { ...answer(state, 'charge', 'compensate', 'failed'), error: { code: 'refund_failed', message: 'no' } }).state;
    expect(stuck).toMatchObject({ status: 'stuck', late: 'refund_failed', failure: { code: 'refund_failed' } });
    expect(finishedNews(refunding, stuck)).toBe(true);
  });
});
