/**
 * A running local stack for the browser test, on the suite's Redis (REDIS_URL): one hmac
 * stream of orders whose consumer dead-letters "poison" orders while `poisonRefused` holds
 * (the bug a redrive follows a fix of), and acks everything else.
 */
import { inject } from 'vitest';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { Rejection } from '../../src/verdict/verdict';
import { startLocalStack, type LocalStack } from '../../local/stack';
import { uniquePrefix } from '../support/redis';

export const ADMIN_TOKEN = 'browser-admin-token-5d0c6a';
export const SHOP_TOKEN = 'browser-shop-token-18be4f';

export interface BrowserStack {
  readonly stack: LocalStack;
  readonly stream: string;
  readonly lines: string[];
  /** While true the consumer dead-letters orders whose payload says `"poison": true`. */
  poisonRefused: boolean;
}

export async function startBrowserStack(): Promise<BrowserStack> {
  const stream = `${uniquePrefix()}:orders`;
  const state = { poisonRefused: true };
  const config = defineConfig({
    name: 'browser-shop',
    redis: { tcp: {} },
    streams: { [stream]: { auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'SHOP_KEY', producer: 'shop' } } },
    routes: { 'order.placed': stream },
    consumers: {
      fulfilment: {
        stream,
        group: 'fulfilment',
        wakeUp: true,
        settings: { runBudgetMs: 5_000, minIdleMs: 10_000 },
        handler: entryConsumer<unknown>(
          ({ payload }) => {
            if (state.poisonRefused && (payload as { poison?: boolean }).poison) throw new Rejection('poison_order', 'the order says it is poison');
          },
          (bytes) => JSON.parse(new TextDecoder().decode(bytes)),
        ),
      },
    },
    publishApi: {
      producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed'] } },
      dashboard: { adminTokenEnv: 'OPS_ADMIN_TOKEN' },
    },
  });
  const lines: string[] = [];
  const env = { REDIS_URL: inject('redisUrl'), SHOP_TOKEN, SHOP_KEY: 'hex:0b5e55ed0b5e55ed0b5e55ed0b5e55ed', OPS_ADMIN_TOKEN: ADMIN_TOKEN };
  const stack = await startLocalStack({ config, env, port: 0, host: '127.0.0.1', out: (line) => lines.push(line), err: (line) => lines.push(line) });
  return Object.assign(state, { stack, stream, lines });
}

/** Publishes one order through the stack's API, as a shop would. */
export async function placeOrder(stack: LocalStack, id: string, payload: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${stack.apiUrl}/v1/events/order.placed`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SHOP_TOKEN}`, 'idempotency-key': id, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  if (response.status !== 202 && response.status !== 200) throw new Error(`publish answered ${response.status}: ${await response.text()}`);
}
