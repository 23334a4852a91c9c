/**
 * The example order saga, assembled: its five consumers over one store, and the demo the
 * local stack runs (two orders — one completes, one is declined at charge and compensated).
 *
 * @example
 *   const saga = createOrderSaga({ store: createMemoryStore(DEMO_STOCK) });
 *   defineConfig({ ..., consumers: { inventory: { ..., handler: saga.consumers.inventory } } });
 */
import type { ConsumerFactory } from '../../src/deployment/consumers';
import { CHARGE_LIMIT_CENTS, EventTypes, ORDER_SAGA, Producers } from './definition';
import { orchestratorResults, orderIntake, ORDERS_TABLE, type OrderPlaced } from './orchestrator';
import { inventory, payment, shipping, STOCK_TABLE } from './participants';
import { FINAL_STATUSES, type OrderState } from './state-machine';
import type { SagaStore } from './store';

export { createMemoryStore } from './store';
export type { SagaStore, StoreTx, OutgoingEvent } from './store';
export { ORDER_SAGA, ORDER_SAGA_DIGEST, EventTypes, Producers, CHARGE_LIMIT_CENTS } from './definition';
export type { OrderState, OrderStatus } from './state-machine';

/** Stock the demo store starts with. */
export const DEMO_STOCK = { [STOCK_TABLE]: { 'sku-espresso': 100, 'sku-grinder': 10 } } as const;

export interface OrderSagaOptions {
  readonly store: SagaStore;
  readonly chargeLimitCents?: number;
  readonly now?: () => Date;
}

export interface OrderSaga {
  readonly store: SagaStore;
  readonly consumers: {
    readonly orderIntake: ConsumerFactory;
    readonly orchestrator: ConsumerFactory;
    readonly inventory: ConsumerFactory;
    readonly payment: ConsumerFactory;
    readonly shipping: ConsumerFactory;
  };
  readonly demo: OrderSagaDemo;
}

/** What the local stack needs to run the demo (structurally the stack's `LocalDemo`). */
export interface OrderSagaDemo {
  /** The publish-API producer whose token places the orders. */
  readonly producer: string;
  /** Two orders, ids unique per `runId`: one completes, one is declined and compensated. */
  events(runId: string): Array<{ eventType: string; eventId: string; payload: OrderPlaced }>;
  /** One object per order reaching a final state; returns an unsubscribe function. */
  onFinished(listener: (fields: Record<string, unknown>) => void): () => void;
  /** Orders and stock, for the status page. */
  snapshot(): Promise<Record<string, unknown>>;
}

function demoOf(store: SagaStore, limit: number): OrderSagaDemo {
  return {
    producer: Producers.shop,
    events(runId) {
      const order = (suffix: string, amount_cents: number): OrderPlaced => ({ order_id: `order-${runId}-${suffix}`, sku: 'sku-espresso', qty: 1, amount_cents });
      return [
        { eventType: EventTypes.orderPlaced, eventId: `placed-${runId}-ok`, payload: order('ok', 1_200) },
        { eventType: EventTypes.orderPlaced, eventId: `placed-${runId}-declined`, payload: order('declined', limit + 49_900) },
      ];
    },
    onFinished(listener) {
      return store.subscribe<OrderState | null>(ORDERS_TABLE, (_key, order) => {
        if (!order || !FINAL_STATUSES.includes(order.status)) return;
        listener({ workflow: ORDER_SAGA.workflow, instance: order.order_id, status: order.status, steps: order.completed, failure: order.failure?.code });
      });
    },
    async snapshot() {
      return {
        orders: (await store.rows<OrderState>(ORDERS_TABLE)).map(([, order]) => order),
        stock: Object.fromEntries(await store.rows<number>(STOCK_TABLE)),
      };
    },
  };
}

export function createOrderSaga(options: OrderSagaOptions): OrderSaga {
  const { store, now } = options;
  const limit = options.chargeLimitCents ?? CHARGE_LIMIT_CENTS;
  return {
    store,
    consumers: {
      orderIntake: orderIntake({ store, now }),
      orchestrator: orchestratorResults({ store, now }),
      inventory: inventory({ store, now }),
      payment: payment({ store, now, chargeLimitCents: limit }),
      shipping: shipping({ store, now }),
    },
    demo: demoOf(store, limit),
  };
}
