/**
 * The orchestrator's state machine, pure: given an order's state and a step result, the
 * next state and the commands to send. Steps run in definition order; when one fails,
 * the steps already completed are compensated in reverse order.
 */
import type { ResultEnvelope } from 'saga-streams';
import { ORDER_SAGA } from './definition';
import type { CommandSpec } from './messages';

export type OrderStatus = 'running' | 'compensating' | 'completed' | 'compensated' | 'failed' | 'stuck';

/** Final states: `failed` = the first step failed (nothing to undo); `stuck` = a compensation failed (an operator must look). */
export const FINAL_STATUSES: readonly OrderStatus[] = ['completed', 'compensated', 'failed', 'stuck'];

export interface OrderState {
  readonly order_id: string;
  readonly sku: string;
  readonly qty: number;
  readonly amount_cents: number;
  readonly status: OrderStatus;
  /** The step whose result is awaited (the last one, in a final state). */
  readonly step: string;
  /** Steps executed and not yet compensated, in order. */
  readonly completed: readonly string[];
  readonly failure?: { readonly code: string; readonly message: string };
}

export interface Transition {
  readonly state: OrderState;
  readonly commands: readonly CommandSpec[];
}

const STEPS: readonly string[] = ORDER_SAGA.steps.map((s) => s.step);

/** What each step's command carries: only what that participant needs. */
export function stepInput(order: OrderState, step: string): CommandSpec['input'] {
  if (step === 'charge') return { order_id: order.order_id, amount_cents: order.amount_cents };
  return { order_id: order.order_id, sku: order.sku, qty: order.qty };
}

function command(order: OrderState, step: string, action: CommandSpec['action']): CommandSpec {
  return { instanceId: order.order_id, step, action, input: stepInput(order, step) };
}

/** A new order: the first step's command. */
export function start(order: Omit<OrderState, 'status' | 'step' | 'completed'>): Transition {
  const state: OrderState = { ...order, status: 'running', step: STEPS[0]!, completed: [] };
  return { state, commands: [command(state, STEPS[0]!, 'execute')] };
}

function compensateNext(order: OrderState, completed: readonly string[], failure: OrderState['failure']): Transition {
  const last = completed[completed.length - 1];
  if (last === undefined) {
    const status = order.status === 'running' ? 'failed' : 'compensated';
    return { state: { ...order, status, completed, failure }, commands: [] };
  }
  const state: OrderState = { ...order, status: 'compensating', step: last, completed, failure };
  return { state, commands: [command(state, last, 'compensate')] };
}

/** The transition for `result`, or undefined when it is not the one awaited (late, repeated or stale). */
export function onResult(order: OrderState, result: ResultEnvelope): Transition | undefined {
  if (result.step !== order.step) return undefined;
  if (order.status === 'running' && result.action === 'execute') {
    if (result.outcome === 'failed') return compensateNext(order, order.completed, result.error);
    const completed = [...order.completed, result.step];
    const next = STEPS[STEPS.indexOf(result.step) + 1];
    if (next === undefined) return { state: { ...order, status: 'completed', completed }, commands: [] };
    const state: OrderState = { ...order, step: next, completed };
    return { state, commands: [command(state, next, 'execute')] };
  }
  if (order.status === 'compensating' && result.action === 'compensate') {
    if (result.outcome === 'failed') return { state: { ...order, status: 'stuck', failure: result.error }, commands: [] };
    return compensateNext(order, order.completed.slice(0, -1), order.failure);
  }
  return undefined;
}
