/**
 * The publish API's spans (issue 17 §2): a SERVER span per request, parented by the request's
 * traceparent header; the publish (`send`) span under it; and, for a request without a
 * traceparent, the send span's context written (signed) into the entry.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import type { RedisPort } from '../../src/redis/port';
import { ioredisKind } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';
import { bearer, env, publishDeployment, SHOP_TOKEN, streamsOf, TRACEPARENT } from './fixture';

describe('publish API spans', () => {
  const exporter = new InMemorySpanExporter();
  let port: RedisPort;
  let admin: Redis;

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });
  beforeEach(() => {
    exporter.reset();
    port = ioredisKind.connect();
    admin = adminClient();
  });
  afterEach(async () => {
    await port.close();
    admin.disconnect();
  });

  async function publish(headers: Record<string, string>): Promise<{ stream: string; server: ReadableSpan; send: ReadableSpan }> {
    const prefix = uniquePrefix();
    const app = createPublishApp({ runtime: createRuntime(publishDeployment(prefix), { port, env }), env, log: () => {} });
    const res = await app.request('/v1/events/order.placed', { method: 'POST', headers: { ...bearer(SHOP_TOKEN), 'idempotency-key': 'evt-1', ...headers }, body: '{}' });
    expect(res.status).toBe(202);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.name === 'POST /v1/events/:eventType')!;
    const send = spans.find((s) => s.name.startsWith('send '))!;
    expect(server.attributes).toMatchObject({ 'http.route': '/v1/events/:eventType', 'http.response.status_code': 202 });
    expect(send.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    return { stream: streamsOf(prefix).orders, server, send };
  }

  it('writes the send span as the entry traceparent when the request carries none', async () => {
    const { stream, send } = await publish({});
    const [[, flat]] = (await admin.xrange(stream, '-', '+')) as [[string, string[]]];
    const traceparent = flat[flat.indexOf('traceparent') + 1];
    expect(traceparent).toBe(`00-${send.spanContext().traceId}-${send.spanContext().spanId}-01`);
  });

  it('parents the server span by the request traceparent, which the entry keeps', async () => {
    const { stream, server } = await publish({ traceparent: TRACEPARENT });
    expect(server.spanContext().traceId).toBe(TRACEPARENT.split('-')[1]);
    expect(server.parentSpanContext?.spanId).toBe(TRACEPARENT.split('-')[2]);
    const [[, flat]] = (await admin.xrange(stream, '-', '+')) as [[string, string[]]];
    expect(flat[flat.indexOf('traceparent') + 1]).toBe(TRACEPARENT);
  });
});
