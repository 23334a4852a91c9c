/**
 * The Worker suites' deployment: `poller` polls the orders stream on POLL_CRON, `waker`
 * polls the events stream only when woken, trim runs on TRIM_CRON, and publishes send
 * wake-ups to the `WAKE_UP_QUEUE` Cloudflare Queue binding. Platform-free, so the same
 * module is bundled into the Miniflare Worker.
 */
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';

export const POLL_CRON = '*/5 * * * *';
export const TRIM_CRON = '0 * * * *';
export const WAKE_UP_BINDING = 'WAKE_UP_QUEUE';
export const SHOP_TOKEN = 'worker-shop-token-1b7c93e0';
export const SHOP_KEY = 'hex:0badc0de0badc0de0badc0de0badc0de';
export const OPS_ADMIN_TOKEN = 'worker-ops-admin-token-8e2f';
export const secrets = { SHOP_TOKEN, SHOP_KEY, OPS_ADMIN_TOKEN };

export function workerStreams(prefix: string) {
  return { orders: `${prefix}:{o}:orders`, events: `${prefix}:{e}:events` };
}

export function workerDeployment(prefix: string): DeploymentConfig {
  const { orders, events } = workerStreams(prefix);
  const settings = { runBudgetMs: 10_000, minIdleMs: 60_000 };
  return defineConfig({
    name: 'edge-shop',
    redis: { rest: {} },
    streams: {
      [orders]: { keyTag: 'o', auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'SHOP_KEY', producer: 'shop' } },
      [events]: { keyTag: 'e', auth: { mode: 'exclusive-stream', producer: 'shop' } },
    },
    routes: { 'order.placed': orders, 'event.logged': events },
    consumers: {
      poller: { stream: orders, group: 'fulfilment', schedule: POLL_CRON, settings, handler: entryConsumer(() => {}) },
      waker: { stream: events, group: 'audit', wakeUp: true, settings, handler: entryConsumer(() => {}) },
    },
    publishApi: {
      producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed', 'event.logged'] } },
      dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' },
    },
    trim: { schedule: TRIM_CRON },
    wakeUp: { kind: 'cloudflare-queue', binding: WAKE_UP_BINDING },
  });
}
