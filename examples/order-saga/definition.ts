/**
 * The example order saga's definition: reserve stock → charge payment → ship; when the
 * charge fails, the reservation is compensated (stock released). Every command carries
 * the definition's version and digest, so a participant bound to this definition
 * dead-letters commands issued for any other one (SPEC §9).
 *
 * The digest rule: `ORDER_SAGA_DIGEST = hex(SHA-256(UTF-8(JSON.stringify(ORDER_SAGA))))`,
 * lowercase. It is a constant rather than computed at import time because Web Crypto's
 * digest is asynchronous and `defineConfig` is not; `test/local/order-saga.test.ts`
 * recomputes it, so editing the definition without updating the digest fails the tests.
 * Recompute with:
 *   npx tsx -e "import('./examples/order-saga/definition.ts').then((m) => console.log(require('node:crypto')
 *     .createHash('sha256').update(JSON.stringify(m.ORDER_SAGA)).digest('hex')))"
 */

export const ORDER_SAGA = {
  workflow: 'order',
  version: 1,
  steps: [
    { step: 'reserve', participant: 'inventory', execute: 'inventory.reserve', compensate: 'inventory.release' },
    { step: 'charge', participant: 'payment', execute: 'payment.charge', compensate: 'payment.refund' },
    { step: 'ship', participant: 'shipping', execute: 'shipping.ship' },
  ],
} as const;

export const ORDER_SAGA_DIGEST = '0582a1de34f11d357a618cab875c37435d03d810d1c122bf228cf1fcd6cdc4e6';

export type StepName = (typeof ORDER_SAGA.steps)[number]['step'];

/** Event types (routing keys) of the example; saga.config.ts routes each to its stream. */
export const EventTypes = {
  orderPlaced: 'order.placed',
  inventoryReserve: 'inventory.reserve',
  inventoryRelease: 'inventory.release',
  paymentCharge: 'payment.charge',
  paymentRefund: 'payment.refund',
  shippingShip: 'shipping.ship',
  inventoryResult: 'inventory.result',
  paymentResult: 'payment.result',
  shippingResult: 'shipping.result',
  /** A step timeout: a result the orchestrator schedules to itself on the results stream. */
  stepTimeout: 'order.step-timeout',
} as const;

/** Producer identities: who signs what (the keys live in saga.config.ts's streams). */
export const Producers = {
  shop: 'shop',
  orchestrator: 'orchestrator',
  inventory: 'inventory',
  payment: 'payment',
  shipping: 'shipping',
} as const;

/** Charges above this many cents are declined: the deterministic failure that triggers compensation. */
export const CHARGE_LIMIT_CENTS = 50_000;

/**
 * Charges above this many cents (and within the limit) go to the payment provider's review:
 * the provider takes the money but its answer comes `PAYMENT_REVIEW_MS` later.
 */
export const REVIEW_ABOVE_CENTS = 30_000;
export const PAYMENT_REVIEW_MS = 5_000;

/**
 * How long an order waits for its payment when it does not say (`pay_within_s`): then its
 * charge times out, the stock is released and the order ends compensated. Generous, because
 * a deployment whose relay runs once a minute takes up to about two minutes for a charge
 * command to reach the payment participant and its answer to come back.
 */
export const DEFAULT_PAY_WITHIN_S = 900;
