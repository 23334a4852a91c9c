/** Small deployments for synthesis cases the example saga does not cover. */
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';

export interface Variant {
  readonly minIdleMs: number;
  readonly runBudgetMs?: number;
  readonly wakeUpConsumer?: boolean;
  readonly trim?: boolean;
  /** Publishes send SQS wake-ups (default: when a consumer takes them). */
  readonly sendsWakeUps?: boolean;
}

export function variant(options: Variant): DeploymentConfig {
  return defineConfig({
    name: 'variant',
    redis: { tcp: {} },
    streams: { 'v:{o}:orders': { auth: { mode: 'hmac', keyId: 'k1', keyEnv: 'ORDERS_KEY', producer: 'shop' } } },
    routes: { 'order.placed': 'v:{o}:orders' },
    consumers: {
      fulfil: {
        stream: 'v:{o}:orders',
        group: 'fulfil',
        schedule: '*/2 * * * *',
        wakeUp: options.wakeUpConsumer ?? false,
        settings: { runBudgetMs: options.runBudgetMs ?? 20_000, minIdleMs: options.minIdleMs },
        handler: entryConsumer(() => {}),
      },
    },
    ...(options.trim === false ? {} : { trim: { schedule: '0 * * * *' } }),
    ...((options.sendsWakeUps ?? options.wakeUpConsumer) ? { wakeUp: { kind: 'sqs' as const, queueUrlEnv: 'WAKEUP_QUEUE_URL' } } : {}),
  });
}
