/**
 * HTTP publish throughput through the Hono app on a local Node server (@hono/node-server):
 * single raw-body publishes and JSON batches, a fixed number of requests in flight, against
 * the same private Redis. Client and server share the process (2 cores).
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { defineConfig } from '../../src/deployment/define-config';
import { entryConsumer } from '../../src/deployment/consumers';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { jsonPayload } from '../fixtures';
import { rssPeakMiB, type ScenarioResult } from './types';

export interface HttpParams {
  readonly redisUrl: string;
  readonly stream: string;
  /** Requests to send; each carries `perRequest` events (1 = the single endpoint). */
  readonly requests: number;
  readonly perRequest: number;
  readonly inFlight: number;
}

const TOKEN = 'bench-producer-token-0123456789';

function benchDeployment(stream: string) {
  return defineConfig({
    name: 'bench',
    redis: { tcp: {} },
    streams: { [stream]: { auth: { mode: 'hmac', keyId: 'bench-1', keyEnv: 'BENCH_KEY', producer: 'bench' } } },
    routes: { 'order.placed': stream },
    consumers: {
      sink: { stream, group: 'bench', wakeUp: true, handler: entryConsumer(() => 'committed') },
    },
    publishApi: { producers: { bench: { tokenEnv: 'BENCH_TOKEN', eventTypes: ['order.placed'] } }, maxBatch: 500 },
  });
}

export async function runHttp(params: HttpParams): Promise<ScenarioResult> {
  const env = { BENCH_KEY: 'bench-hmac-key-0123456789abcdef', BENCH_TOKEN: TOKEN };
  const port = connectIoredis(params.redisUrl);
  const app = createPublishApp({ runtime: createRuntime(benchDeployment(params.stream), { port, env }), env, log: () => {} });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const payload = jsonPayload(300);
  // Event ids unique to this run: the dedupe window would answer a repeated id with 200.
  const run = Math.random().toString(36).slice(2, 8);
  const headers = { authorization: `Bearer ${TOKEN}` };

  let next = 0;
  const send = async (i: number): Promise<void> => {
    const response =
      params.perRequest === 1
        ? await fetch(`${base}/v1/events/order.placed`, { method: 'POST', headers: { ...headers, 'idempotency-key': `h-${run}-${i}` }, body: payload })
        : await fetch(`${base}/v1/events`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({
              events: Array.from({ length: params.perRequest }, (_, j) => ({
                event_type: 'order.placed',
                event_id: `b-${run}-${i}-${j}`,
                payload: { base64: Buffer.from(payload).toString('base64') },
              })),
            }),
          });
    if (response.status !== 202) throw new Error(`publish answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };
  const worker = async () => {
    for (let i = next++; i < params.requests; i = next++) await send(i);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: params.inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => server.close(resolve));
  await port.close();
  return { entries: params.requests * params.perRequest, seconds, rssPeakMiB: rssPeakMiB(), extra: { requestsPerSec: params.requests / seconds } };
}
