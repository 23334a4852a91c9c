/**
 * The example order saga, assembled: its five consumers over the deployment's Postgres
 * (orders, stock and saga instances in the example's schema; inbox and outbox from
 * saga-streams/postgres), its migrations, and the demo the local stack runs (three orders —
 * one completes, one is declined at charge and compensated, and one whose payment answers
 * after its timeout: compensated when the timeout fires, its late charge refunded).
 *
 * @example
 *   const saga = createOrderSaga();
 *   export const migrations = saga.migrations;
 *   defineConfig({ ..., postgres: { relay: { schedule: '* * * * *' } },
 *     consumers: { inventory: { ..., handler: saga.consumers.inventory } } });
 */
import type { ConsumerFactory, Postgres } from 'saga-streams';
import type { Migration } from 'saga-streams/postgres';
import { CHARGE_LIMIT_CENTS, EventTypes, ORDER_SAGA, Producers, REVIEW_ABOVE_CENTS } from './definition';
import { orchestratorResults, orderIntake, type OrderPlaced } from './orchestrator';
import { inventory, payment, shipping } from './participants';
import { DEFAULT_SAGA_SCHEMA, orderSagaMigrations, sagaTables, type SagaTables } from './schema';
import type { OrderState } from './state-machine';

export { ORDER_SAGA, ORDER_SAGA_DIGEST, EventTypes, Producers, CHARGE_LIMIT_CENTS, REVIEW_ABOVE_CENTS, PAYMENT_REVIEW_MS, DEFAULT_PAY_WITHIN_S } from './definition';
export { DEMO_STOCK, DEFAULT_SAGA_SCHEMA } from './schema';
export type { OrderState, OrderStatus, LateOutcome } from './state-machine';

export interface OrderSagaOptions {
  /** Schema of the example's tables (default `order_saga`). */
  readonly schema?: string;
  readonly chargeLimitCents?: number;
  /** Charges above this (within the limit) are answered `paymentReviewMs` late (default REVIEW_ABOVE_CENTS). */
  readonly reviewAboveCents?: number;
  readonly paymentReviewMs?: number;
  readonly now?: () => Date;
}

export interface OrderSaga {
  readonly consumers: {
    readonly orderIntake: ConsumerFactory;
    readonly orchestrator: ConsumerFactory;
    readonly inventory: ConsumerFactory;
    readonly payment: ConsumerFactory;
    readonly shipping: ConsumerFactory;
  };
  /** The example's tables (applied after saga-streams' own by `db migrate` and the local stack). */
  readonly migrations: readonly Migration[];
  readonly demo: OrderSagaDemo;
}

/** What the local stack needs to run the demo (structurally the stack's `LocalDemo`). */
export interface OrderSagaDemo {
  /** The publish-API producer whose token places the orders. */
  readonly producer: string;
  /**
   * Three orders, ids unique per `runId`: one completes; one is declined and compensated; one
   * is under payment review for longer than it may wait — its charge times out, it is
   * compensated, and the late charge is refunded.
   */
  events(runId: string): Array<{ eventType: string; eventId: string; payload: OrderPlaced }>;
  /**
   * One object per order reaching a final state (after its commit), and one more when a final
   * order's late answer is settled (`late`: refunded, nothing_to_undo, refund_failed); returns
   * an unsubscribe function.
   */
  onFinished(listener: (fields: Record<string, unknown>) => void): () => void;
  /** Orders, saga instances and stock, for the status page. */
  snapshot(postgres: () => Promise<Postgres>): Promise<Record<string, unknown>>;
}

/** The status page shows the latest instances only. */
const SNAPSHOT_ROWS = 20;
/** The demo's late order may wait this long for its payment: less than the review takes. */
const DEMO_PAY_WITHIN_S = 2;

function demoOf(tables: SagaTables, limit: number, reviewAbove: number, listeners: Set<(order: OrderState) => void>): OrderSagaDemo {
  return {
    producer: Producers.shop,
    events(runId) {
      const order = (suffix: string, amount_cents: number, extra: Partial<OrderPlaced> = {}): OrderPlaced => ({
        order_id: `order-${runId}-${suffix}`,
        sku: 'sku-espresso',
        qty: 1,
        amount_cents,
        ...extra,
      });
      return [
        { eventType: EventTypes.orderPlaced, eventId: `placed-${runId}-ok`, payload: order('ok', 1_200) },
        { eventType: EventTypes.orderPlaced, eventId: `placed-${runId}-declined`, payload: order('declined', limit + 49_900) },
        { eventType: EventTypes.orderPlaced, eventId: `placed-${runId}-late`, payload: order('late', Math.min(limit, reviewAbove + 9_900), { pay_within_s: DEMO_PAY_WITHIN_S }) },
      ];
    },
    onFinished(listener) {
      const notify = (order: OrderState) =>
        listener({ workflow: ORDER_SAGA.workflow, instance: order.order_id, status: order.status, steps: order.completed, failure: order.failure?.code, late: order.late });
      listeners.add(notify);
      return () => listeners.delete(notify);
    },
    async snapshot(postgres) {
      const { db } = await postgres();
      const instances = await db.query<{ state: OrderState }>(`SELECT state FROM ${tables.instances} ORDER BY updated_at DESC LIMIT ${SNAPSHOT_ROWS}`);
      const stock = await db.query<{ sku: string; qty: number }>(`SELECT sku, qty FROM ${tables.stock} ORDER BY sku`);
      return { orders: instances.map((row) => row.state), stock: Object.fromEntries(stock.map((row) => [row.sku, row.qty])) };
    },
  };
}

export function createOrderSaga(options: OrderSagaOptions = {}): OrderSaga {
  const schema = options.schema ?? DEFAULT_SAGA_SCHEMA;
  const tables = sagaTables(schema);
  const { now } = options;
  const limit = options.chargeLimitCents ?? CHARGE_LIMIT_CENTS;
  const reviewAbove = options.reviewAboveCents ?? REVIEW_ABOVE_CENTS;
  const listeners = new Set<(order: OrderState) => void>();
  const onFinished = (order: OrderState) => {
    for (const listener of listeners) listener(order);
  };
  return {
    consumers: {
      orderIntake: orderIntake({ tables, now }),
      orchestrator: orchestratorResults({ tables, now, onFinished }),
      inventory: inventory({ tables, now }),
      payment: payment({ tables, now, chargeLimitCents: limit, reviewAboveCents: reviewAbove, reviewMs: options.paymentReviewMs }),
      shipping: shipping({ tables, now }),
    },
    migrations: orderSagaMigrations(schema),
    demo: demoOf(tables, limit, reviewAbove, listeners),
  };
}
