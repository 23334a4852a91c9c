/**
 * The orchestrator's state machine, pure: given an order's state and a step result, the
 * next state and the commands to send. Steps run in definition order; when one fails,
 * the steps already completed are compensated in reverse order.
 *
 * The charge has a timeout (the order's `pay_within_s`): issuing the charge arms it, its
 * answer disarms it (the transition says which to cancel), and a timeout that fires while
 * the charge is still awaited fails the step like a declined charge — the reservation is
 * released and the order ends `compensated`, failure `step_timed_out`. A timeout is accepted
 * only when it is the one armed (`timeout` holds its event_id) and the order still waits on
 * that step: one that fires after the answer (its cancel came too late, or was lost) finds
 * the timeout disarmed and is ignored, like any stale result. The charge's own answer, when
 * it comes after its timeout fired, is compensated: a late success is refunded (`late`
 * records it), a late failure leaves nothing to undo.
 */
import { isStepTimeout, type ResultEnvelope } from 'saga-streams';
import { DEFAULT_PAY_WITHIN_S, ORDER_SAGA } from './definition';
import { timeoutIdOf, type CommandSpec } from './messages';

export type OrderStatus = 'running' | 'compensating' | 'completed' | 'compensated' | 'failed' | 'stuck';

/** Final states: `failed` = the first step failed (nothing to undo); `stuck` = a compensation failed (an operator must look). */
export const FINAL_STATUSES: readonly OrderStatus[] = ['completed', 'compensated', 'failed', 'stuck'];

/** What became of a timed-out step's late answer. */
export type LateOutcome = 'refunding' | 'refunded' | 'nothing_to_undo' | 'refund_failed';

export interface OrderState {
  readonly order_id: string;
  readonly sku: string;
  readonly qty: number;
  readonly amount_cents: number;
  /** Seconds the charge may take before it times out (absent in instances started before timeouts: the default). */
  readonly pay_within_s?: number;
  readonly status: OrderStatus;
  /** The step whose result is awaited (the last one, in a final state). */
  readonly step: string;
  /** Steps executed and not yet compensated, in order. */
  readonly completed: readonly string[];
  readonly failure?: { readonly code: string; readonly message: string };
  /** The event_id of the armed timeout, while the command it guards is awaited. */
  readonly timeout?: string;
  /** The step whose timeout fired: its answer, if it still comes, is late. */
  readonly timed_out?: string;
  readonly late?: LateOutcome;
}

export interface Transition {
  readonly state: OrderState;
  readonly commands: readonly CommandSpec[];
  /** Schedule a timeout for the command of this step in `commands`, due after `afterMs`. */
  readonly arm?: { readonly step: string; readonly afterMs: number };
  /** Cancel this armed timeout (the event_id): the answer it guarded came. */
  readonly cancel?: string;
}

const STEPS: readonly string[] = ORDER_SAGA.steps.map((s) => s.step);

/** Steps whose execution times out, and after how long. */
const TIMED_STEPS: Readonly<Record<string, (order: OrderState) => number>> = {
  charge: (order) => (order.pay_within_s ?? DEFAULT_PAY_WITHIN_S) * 1_000,
};

/** What each step's command carries: only what that participant needs. */
export function stepInput(order: OrderState, step: string): CommandSpec['input'] {
  if (step === 'charge') return { order_id: order.order_id, amount_cents: order.amount_cents };
  return { order_id: order.order_id, sku: order.sku, qty: order.qty };
}

function command(order: OrderState, step: string, action: CommandSpec['action']): CommandSpec {
  return { instanceId: order.order_id, step, action, input: stepInput(order, step) };
}

/** Executes `step` next, arming its timeout when it has one. */
function execute(order: OrderState, step: string): Transition {
  const next = command(order, step, 'execute');
  const timed = TIMED_STEPS[step];
  if (!timed) return { state: { ...order, step, timeout: undefined }, commands: [next] };
  const state = { ...order, step, timeout: timeoutIdOf(next) };
  return { state, commands: [next], arm: { step, afterMs: timed(state) } };
}

/** A new order: the first step's command. */
export function start(order: Omit<OrderState, 'status' | 'step' | 'completed'>): Transition {
  return execute({ ...order, status: 'running', step: STEPS[0]!, completed: [] }, STEPS[0]!);
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

/** The armed timeout fired while its step was awaited: the step failed. Any other timeout is stale. */
function onTimeout(order: OrderState, timeout: ResultEnvelope): Transition | undefined {
  if (order.status !== 'running' || order.timeout === undefined || order.timeout !== timeout.result_id) return undefined;
  return compensateNext({ ...order, timeout: undefined, timed_out: timeout.step }, order.completed, timeout.error);
}

/** The timed-out step's own answer, or its refund's: a late success is undone, once. */
function onLateResult(order: OrderState, result: ResultEnvelope): Transition | undefined {
  if (result.action === 'execute' && order.late === undefined) {
    if (result.outcome === 'failed') return { state: { ...order, late: 'nothing_to_undo' }, commands: [] };
    return { state: { ...order, late: 'refunding' }, commands: [command(order, result.step, 'compensate')] };
  }
  if (result.action === 'compensate' && order.late === 'refunding') {
    if (result.outcome === 'failed') return { state: { ...order, status: 'stuck', late: 'refund_failed', failure: result.error }, commands: [] };
    return { state: { ...order, late: 'refunded' }, commands: [] };
  }
  return undefined;
}

/** The transition for `result`, or undefined when it is not the one awaited (late, repeated or stale). */
export function onResult(order: OrderState, result: ResultEnvelope): Transition | undefined {
  if (isStepTimeout(result)) return onTimeout(order, result);
  if (order.timed_out === result.step) return onLateResult(order, result);
  if (result.step !== order.step) return undefined;
  if (order.status === 'running' && result.action === 'execute') {
    // The answer came: disarm the step's timeout (a cancel row in the same transaction).
    const cancel = order.timeout;
    const answered: OrderState = { ...order, timeout: undefined };
    if (result.outcome === 'failed') return { ...compensateNext(answered, answered.completed, result.error), cancel };
    const completed = [...answered.completed, result.step];
    const next = STEPS[STEPS.indexOf(result.step) + 1];
    if (next === undefined) return { state: { ...answered, status: 'completed', completed }, commands: [], cancel };
    return { ...execute({ ...answered, completed }, next), cancel };
  }
  if (order.status === 'compensating' && result.action === 'compensate') {
    if (result.outcome === 'failed') return { state: { ...order, status: 'stuck', failure: result.error }, commands: [] };
    return compensateNext(order, order.completed.slice(0, -1), order.failure);
  }
  return undefined;
}

/**
 * Whether a committed transition from `before` to `after` is news for whoever follows
 * finished orders: the order reached a final state, or a final order's late answer was
 * settled (refunded, nothing to undo, or a refund that failed).
 */
export function finishedNews(before: OrderState | undefined, after: OrderState): boolean {
  if (!FINAL_STATUSES.includes(after.status)) return false;
  if (before === undefined || !FINAL_STATUSES.includes(before.status)) return true;
  return after.late !== before.late && after.late !== 'refunding';
}
