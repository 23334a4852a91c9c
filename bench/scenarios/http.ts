/**
 * HTTP publish throughput through the Hono app on a local Node server (@hono/node-server):
 * single raw-body publishes and JSON batches, a fixed number of requests in flight, against
 * the same private Redis. Client and server share the process (2 cores), so the client is
 * node:http with a keep-alive agent: global fetch (undici) cost more CPU per request than
 * the whole publish path and would have been most of what this measured.
 */
import { serve } from '@hono/node-server';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineConfig } from '../../src/deployment/define-config';
import { entryConsumer } from '../../src/deployment/consumers';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { nodeHmac } from '../../src/node/crypto';
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
  const app = createPublishApp({ runtime: createRuntime(benchDeployment(params.stream), { port, env, hmac: nodeHmac }), env, log: () => {} });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const payload = jsonPayload(300);
  // Event ids unique to this run: the dedupe window would answer a repeated id with 200.
  const run = Math.random().toString(36).slice(2, 8);
  const headers = { authorization: `Bearer ${TOKEN}` };

  const agent = new Agent({ keepAlive: true, maxSockets: params.inFlight });
  const post = (path: string, extraHeaders: Record<string, string>, body: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(`${base}${path}`, { method: 'POST', agent, headers: { ...headers, ...extraHeaders, 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          res.statusCode === 202 ? resolve() : reject(new Error(`publish answered ${res.statusCode}: ${Buffer.concat(chunks).toString()}`)),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });

  let next = 0;
  const send = (i: number): Promise<void> =>
    params.perRequest === 1
      ? post('/v1/events/order.placed', { 'idempotency-key': `h-${run}-${i}` }, payload)
      : post(
          '/v1/events',
          { 'content-type': 'application/json' },
          JSON.stringify({
            events: Array.from({ length: params.perRequest }, (_, j) => ({
              event_type: 'order.placed',
              event_id: `b-${run}-${i}-${j}`,
              payload: { base64: Buffer.from(payload).toString('base64') },
            })),
          }),
        );
  const worker = async () => {
    for (let i = next++; i < params.requests; i = next++) await send(i);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: params.inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  await port.close();
  return { entries: params.requests * params.perRequest, seconds, rssPeakMiB: rssPeakMiB(), extra: { requestsPerSec: params.requests / seconds } };
}
