/**
 * The example's own tables, in their own schema (default `order_saga`), as migrations that
 * `saga-streams db migrate` applies after the library's (saga.config.ts exports them as
 * `migrations`; the local stack applies them at start). The demo stock is seeded once, by a
 * migration, so it is not reset when the stack restarts.
 */
import type { Migration } from 'saga-streams/postgres';

export interface SagaTables {
  readonly orders: string;
  readonly instances: string;
  readonly stock: string;
  readonly reservations: string;
  readonly charges: string;
  readonly shipments: string;
}

export const DEFAULT_SAGA_SCHEMA = 'order_saga';

export function sagaTables(schema: string): SagaTables {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new TypeError('the order saga schema must be a lowercase SQL identifier');
  const t = (name: string) => `"${schema}".${name}`;
  return { orders: t('orders'), instances: t('saga_instances'), stock: t('stock'), reservations: t('reservations'), charges: t('charges'), shipments: t('shipments') };
}

/** Stock the demo starts with. */
export const DEMO_STOCK: Readonly<Record<string, number>> = { 'sku-espresso': 100, 'sku-grinder': 10 };

export function orderSagaMigrations(schema: string): Migration[] {
  const t = sagaTables(schema);
  return [
    {
      id: `order_saga_0001_tables:${schema}`,
      statements: () => [
        `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
        `CREATE TABLE IF NOT EXISTS ${t.orders} (order_id text PRIMARY KEY, sku text NOT NULL, qty int NOT NULL, amount_cents int NOT NULL, placed_at timestamptz NOT NULL DEFAULT now())`,
        // One row per saga instance: the orchestrator's state (state-machine.ts), as JSON.
        `CREATE TABLE IF NOT EXISTS ${t.instances} (instance_id text PRIMARY KEY, workflow text NOT NULL, status text NOT NULL, state jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
        `CREATE TABLE IF NOT EXISTS ${t.stock} (sku text PRIMARY KEY, qty int NOT NULL CHECK (qty >= 0))`,
        `CREATE TABLE IF NOT EXISTS ${t.reservations} (order_id text PRIMARY KEY, sku text NOT NULL, qty int NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS ${t.charges} (order_id text PRIMARY KEY, amount_cents int NOT NULL, refunded_cents int NOT NULL DEFAULT 0)`,
        `CREATE TABLE IF NOT EXISTS ${t.shipments} (order_id text PRIMARY KEY, sku text NOT NULL, qty int NOT NULL, tracking text NOT NULL)`,
        ...Object.entries(DEMO_STOCK).map(([sku, qty]) => `INSERT INTO ${t.stock} (sku, qty) VALUES ('${sku}', ${qty}) ON CONFLICT DO NOTHING`),
      ],
    },
  ];
}
