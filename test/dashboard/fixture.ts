/**
 * A deployment for the dashboard's data sections: one stream of orders read by two groups
 * (billing rejects payloads holding "reject" or "bad", retains those holding "retry"; audit
 * commits everything) and a results stream nobody reads. Entries are written raw by the admin client (the streams are
 * exclusive-stream, so no signature), which lets a test put any bytes in a payload.
 */
import type { Redis } from 'ioredis';
import { Hono } from 'hono';
import type { DashboardContext, DashboardSection } from '../../src/dashboard/contract';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import type { RedisPort } from '../../src/redis/port';
import { Rejection } from '../../src/verdict/verdict';

export function dashboardDeployment(prefix: string): DeploymentConfig {
  const orders = `${prefix}:{o}:orders`;
  const results = `${prefix}:{r}:results`;
  const settings = { runBudgetMs: 5_000, minIdleMs: 10_000 };
  const billing = entryConsumer(({ payload }) => {
    const text = Buffer.from(payload).toString('latin1');
    if (text.includes('reject')) throw new Rejection('order_unknown');
    if (text.includes('bad')) throw new Rejection('total_invalid');
    if (text.includes('retry')) throw new Error('transient');
  });
  return defineConfig({
    name: 'shop',
    redis: { tcp: {} },
    streams: {
      [orders]: { auth: { mode: 'exclusive-stream', producer: 'shop' } },
      [results]: { auth: { mode: 'exclusive-stream', producer: 'billing' } },
    },
    routes: { 'order.placed': orders, 'billing.done': results },
    consumers: {
      billing: { stream: orders, group: 'billing', schedule: '* * * * *', settings, handler: billing },
      audit: { stream: orders, group: 'audit', schedule: '* * * * *', settings, handler: entryConsumer(() => undefined) },
    },
  });
}

export const ordersOf = (config: DeploymentConfig) => Object.keys(config.data.streams)[0]!;
export const resultsOf = (config: DeploymentConfig) => Object.keys(config.data.streams)[1]!;

export function dashboardRuntime(config: DeploymentConfig, port: RedisPort): DeploymentRuntime {
  return createRuntime(config, { port, env: {} });
}

/** Runs one drain of a consumer (creating its group first). */
export async function drain(runtime: DeploymentRuntime, consumer: string) {
  const poller = runtime.poller(consumer);
  await poller.ensureGroup();
  return poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
}

/** Appends a raw entry with event, event_id and payload fields. */
export async function appendOrder(admin: Redis, stream: string, eventId: string, payload: string | Buffer, extra: Record<string, string> = {}): Promise<string> {
  return (await admin.xadd(stream, '*', 'event', 'order.placed', 'event_id', eventId, 'payload', payload, ...Object.entries(extra).flat())) as string;
}

/** The section mounted as the shell will mount it, with a bare page frame. */
export function mounted(section: DashboardSection, name: string, runtime: DeploymentRuntime, now = Date.now): Hono {
  const ctx: DashboardContext = {
    runtime,
    now,
    page: (title, body) => `<!doctype html><title>${title}</title><main>${body}</main>`,
  };
  return new Hono().route(`/ops/${name}`, section(ctx));
}
