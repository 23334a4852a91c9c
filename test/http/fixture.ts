/**
 * A deployment for the publish API suites: `shop` signs order events on an hmac stream,
 * `billing` owns an exclusive stream; `audit.logged` is routed but no producer may publish
 * it. Token and key values are recognisable so tests can scan responses and logs for them.
 */
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';
import type { DurabilityInput } from '../../src/redis/durability';

export const SHOP_TOKEN = 'shop-token-6f1d2a9c0b7e4f31';
export const BILLING_TOKEN = 'billing-token-93c5e1d7a2f0';
export const SHOP_KEY = 'hex:5ec7e75ec7e75ec7e75ec7e75ec7e75e';
export const env = { SHOP_TOKEN, BILLING_TOKEN, SHOP_KEY };
export const SECRET_VALUES = [SHOP_TOKEN, BILLING_TOKEN, SHOP_KEY, SHOP_KEY.slice(4)];
export const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

export interface Streams {
  readonly orders: string;
  readonly payments: string;
}

export function streamsOf(prefix: string): Streams {
  return { orders: `${prefix}:orders`, payments: `${prefix}:payments` };
}

export interface PublishApiOptions {
  readonly bodyLimitBytes?: number;
  readonly maxBatch?: number;
  readonly dedupeWindowSeconds?: number;
  readonly dashboard?: { readonly adminTokenEnv: string };
  readonly durability?: DurabilityInput;
}

export function publishDeployment(prefix: string, publishApi: PublishApiOptions = {}): DeploymentConfig {
  const { orders, payments } = streamsOf(prefix);
  return defineConfig({
    name: 'shop',
    redis: { tcp: {}, rest: {} },
    streams: {
      [orders]: { auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'SHOP_KEY', producer: 'shop' } },
      [payments]: { auth: { mode: 'exclusive-stream', producer: 'billing' } },
    },
    routes: { 'order.placed': orders, 'order.paid': orders, 'payment.charged': payments, 'audit.logged': payments },
    consumers: {
      fulfilment: {
        stream: orders,
        group: 'fulfilment',
        schedule: '* * * * *',
        wakeUp: true,
        settings: { runBudgetMs: 5_000, minIdleMs: 10_000 },
        handler: entryConsumer(() => {}),
      },
    },
    publishApi: {
      producers: {
        shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed', 'order.paid'] },
        billing: { tokenEnv: 'BILLING_TOKEN', eventTypes: ['payment.charged'] },
      },
      ...publishApi,
    },
  });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Fails the test if any secret value appears in the text. */
export function secretsIn(text: string): string[] {
  return SECRET_VALUES.filter((secret) => text.includes(secret));
}
