/**
 * The example deployment: an order saga (reserve stock → charge payment → ship; a failed
 * charge releases the stock), shared by every entry point — the local stack
 * (`npm start`), the CLI (`saga-streams --config saga.config.ts`), the Lambda functions
 * and the Worker. The saga itself (handlers, tables, demo) is the example package
 * `order-saga-example` (examples/order-saga/, an npm workspace), a consumer of saga-streams.
 *
 * State: orders, stock and saga instances live in Postgres (schema `order_saga`), each
 * handling one transaction with its inbox row and its outgoing commands/results in the
 * outbox, which the relay job publishes. The local stack uses PGlite in .saga-streams/pglite
 * (no server) unless DATABASE_URL is set; deployed functions use DATABASE_URL.
 *
 * Flow: the shop publishes `order.placed` through the publish API (producer token) onto
 * the orders stream; the orchestrator's `order-intake` consumer starts an instance and
 * sends `inventory.reserve` to the inventory command stream; each participant reports on
 * the shared results stream, which the `orchestrator` consumer reads to send the next
 * command (or the compensation, `inventory.release`). Issuing the charge also schedules its
 * timeout, `order.step-timeout`: a result the orchestrator signs to itself on the results
 * stream, due when the order's payment window ends, and cancelled when the charge's answer
 * comes (see examples/order-saga/state-machine.ts).
 *
 * Secrets — environment variable NAMES only; values come from the environment / secret
 * store (key text: `hex:…`, `base64:…` or UTF-8, at least 16 bytes). `saga-streams dev`
 * generates any that are missing.
 *   REDIS_URL                     TCP Redis (Lambda, CLI, local stack)
 *   DATABASE_URL                  Postgres (Lambda, CLI; the local stack falls back to PGlite)
 *   UPSTASH_REDIS_REST_URL/_TOKEN REST Redis (Cloudflare Worker)
 *   ORDERS_SIGNING_KEY            shop → orders stream (hmac; the publish API signs as `shop`)
 *   INVENTORY_COMMAND_KEY         orchestrator → inventory commands (hmac)
 *   PAYMENT_COMMAND_KEY           orchestrator → payment commands (hmac)
 *   SHIPPING_COMMAND_KEY          orchestrator → shipping commands (hmac)
 *   INVENTORY_RESULT_KEY          inventory → results (hmac-keyring key `inventory-1`)
 *   PAYMENT_RESULT_KEY            payment → results (hmac-keyring key `payment-1`)
 *   SHIPPING_RESULT_KEY           shipping → results (hmac-keyring key `shipping-1`)
 *   ORCHESTRATOR_TIMEOUT_KEY      orchestrator → results, its step timeouts only (hmac-keyring key `orchestrator-1`)
 *   SHOP_PRODUCER_TOKEN           bearer token of the `shop` producer on the publish API
 *   OPS_ADMIN_TOKEN               admin token of the ops dashboard (/ops on the publish API)
 *   WAKEUP_QUEUE_URL              SQS queue the publish API sends wake-ups to (AWS)
 *
 * Every stream name carries its own hash tag (`{orders}`, …) and `keyTag`, so on Redis
 * Cluster each stream's DLT, markers and cursor share its slot.
 */
import { defineConfig } from './src/deployment/define-config';
import { createOrderSaga, EventTypes, Producers } from 'order-saga-example';
import type { LocalDemo } from './local/demo';

export const Streams = {
  orders: 'saga:{orders}:placed',
  inventory: 'saga:{inventory}:commands',
  payment: 'saga:{payment}:commands',
  shipping: 'saga:{shipping}:commands',
  results: 'saga:{order-results}:results',
} as const;

const saga = createOrderSaga();

/** The local stack places the demo orders through the publish API and prints finished instances. */
export const demo: LocalDemo = saga.demo;
/** The example's tables: `saga-streams db migrate` applies them after the library's own. */
export const migrations = saga.migrations;

const EVERY_MINUTE = '* * * * *';
/** Per-consumer budgets: a run holds entries ≤ 20 s; entries idle 60 s are reclaimed from a dead run. */
const settings = { batch: 50, handlerTimeoutMs: 5_000, runBudgetMs: 20_000, minIdleMs: 60_000 };

const commandStream = (tag: string, keyEnv: string) => ({
  keyTag: tag,
  auth: { mode: 'hmac' as const, keyId: `orchestrator-${tag}-1`, keyEnv, producer: Producers.orchestrator },
});

export default defineConfig({
  name: 'order-saga',
  redis: {
    tcp: { urlEnv: 'REDIS_URL' },
    rest: { urlEnv: 'UPSTASH_REDIS_REST_URL', tokenEnv: 'UPSTASH_REDIS_REST_TOKEN' },
  },
  streams: {
    [Streams.orders]: { keyTag: 'orders', auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'ORDERS_SIGNING_KEY', producer: Producers.shop } },
    [Streams.inventory]: commandStream('inventory', 'INVENTORY_COMMAND_KEY'),
    [Streams.payment]: commandStream('payment', 'PAYMENT_COMMAND_KEY'),
    [Streams.shipping]: commandStream('shipping', 'SHIPPING_COMMAND_KEY'),
    [Streams.results]: {
      keyTag: 'order-results',
      auth: {
        mode: 'hmac-keyring',
        keys: {
          'inventory-1': { producer: Producers.inventory, keyEnv: 'INVENTORY_RESULT_KEY' },
          'payment-1': { producer: Producers.payment, keyEnv: 'PAYMENT_RESULT_KEY' },
          'shipping-1': { producer: Producers.shipping, keyEnv: 'SHIPPING_RESULT_KEY' },
          // The orchestrator's own step timeouts; its results consumer admits nothing else from it.
          'orchestrator-1': { producer: Producers.orchestrator, keyEnv: 'ORCHESTRATOR_TIMEOUT_KEY' },
        },
      },
    },
  },
  routes: {
    [EventTypes.orderPlaced]: Streams.orders,
    [EventTypes.inventoryReserve]: Streams.inventory,
    [EventTypes.inventoryRelease]: Streams.inventory,
    [EventTypes.paymentCharge]: Streams.payment,
    [EventTypes.paymentRefund]: Streams.payment,
    [EventTypes.shippingShip]: Streams.shipping,
    [EventTypes.inventoryResult]: Streams.results,
    [EventTypes.paymentResult]: Streams.results,
    [EventTypes.shippingResult]: Streams.results,
    [EventTypes.stepTimeout]: Streams.results,
  },
  consumers: {
    'order-intake': {
      stream: Streams.orders,
      group: 'orchestrator',
      schedule: EVERY_MINUTE,
      wakeUp: true,
      publishesAs: [Producers.orchestrator],
      settings,
      handler: saga.consumers.orderIntake,
    },
    orchestrator: {
      stream: Streams.results,
      group: 'orchestrator',
      schedule: EVERY_MINUTE,
      wakeUp: true,
      publishesAs: [Producers.orchestrator],
      settings,
      handler: saga.consumers.orchestrator,
    },
    inventory: {
      stream: Streams.inventory,
      group: 'inventory',
      schedule: EVERY_MINUTE,
      wakeUp: true,
      publishesAs: [Producers.inventory],
      settings,
      handler: saga.consumers.inventory,
    },
    payment: {
      stream: Streams.payment,
      group: 'payment',
      schedule: EVERY_MINUTE,
      wakeUp: true,
      publishesAs: [Producers.payment],
      settings,
      handler: saga.consumers.payment,
    },
    shipping: {
      stream: Streams.shipping,
      group: 'shipping',
      schedule: EVERY_MINUTE,
      wakeUp: true,
      publishesAs: [Producers.shipping],
      settings,
      handler: saga.consumers.shipping,
    },
  },
  publishApi: {
    producers: { [Producers.shop]: { tokenEnv: 'SHOP_PRODUCER_TOKEN', eventTypes: [EventTypes.orderPlaced] } },
    // The ops dashboard at /ops, behind its own admin token (off when this line is absent).
    dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' },
  },
  trim: { schedule: '*/15 * * * *', dltRetentionSeconds: 14 * 24 * 3600, reaperIdleMs: 24 * 3600 * 1000 },
  // Inbox/outbox tables in `public` by default; the relay publishes the outbox every minute
  // (and the local stack right after each commit).
  postgres: { urlEnv: 'DATABASE_URL', relay: { schedule: EVERY_MINUTE } },
  // One target per platform: the Lambda publish API sends SQS wake-ups, the Worker a Queue message.
  wakeUp: [
    { kind: 'sqs', queueUrlEnv: 'WAKEUP_QUEUE_URL' },
    { kind: 'cloudflare-queue', binding: 'WAKE_UP_QUEUE' },
  ],
});
