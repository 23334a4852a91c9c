/**
 * OpenTelemetry spans end to end on a real Redis (issue 17 §2): publish span → entry →
 * process span parented by the publish span, only when the traceparent is vouched for
 * (a verified signature or an exclusive stream); a forged or unsigned traceparent is a
 * link, never a parent. With no SDK registered nothing is traced and nothing breaks.
 */
import { context, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamAuthInput } from '../../src/auth/modes';
import { createPoller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { createCommandConsumer } from '../../src/saga/command-consumer';
import { activeTracer } from '../../src/telemetry/tracing';
import { ioredisKind } from '../support/clients';
import { fastConfig, recordingProcessor } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { command, handSigned, OTHER_TRACEPARENT, ROUTE, TRACEPARENT } from './saga-fixtures';
import { appendFields, entriesOf } from './stream-entries';

const KEY = 'orchestrator-signing-key-000001';
const HMAC: StreamAuthInput = { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'orchestrator' };
const EXCLUSIVE: StreamAuthInput = { mode: 'exclusive-stream', producer: 'orchestrator' };

const [, TRACE_ID, SPAN_ID] = TRACEPARENT.split('-') as [string, string, string];
const [, OTHER_TRACE_ID, OTHER_SPAN_ID] = OTHER_TRACEPARENT.split('-') as [string, string, string];

let admin: Redis;
let port: RedisPort;
let stream: string;

async function commandConsumer(auth: StreamAuthInput, onHandle: () => void = () => {}) {
  const poller = createCommandConsumer({ port, config: fastConfig(stream), auth, route: ROUTE, handler: () => onHandle() });
  await poller.ensureGroup();
  return poller;
}
const drain = (poller: { run: (o: { mode: 'drain'; deadline: number }) => Promise<unknown> }) =>
  poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
const publishCommand = (auth: StreamAuthInput, traceparent?: string) =>
  createPublisher({ port, routes: { 'saga.command': stream }, auth }).publish({
    eventType: 'saga.command',
    eventId: 'c1',
    payload: JSON.stringify(command('c1')),
    ...(traceparent === undefined ? {} : { traceparent }),
  });

describe('tracing with no SDK registered', () => {
  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h), 'commands');

  it('publishes and handles as before, writing no traceparent', async () => {
    expect(activeTracer()).toBeUndefined();
    const consumer = await commandConsumer(HMAC);
    await publishCommand(HMAC);
    expect([...(await entriesOf(admin, stream))[0]![1].keys()]).not.toContain('traceparent');
    expect(await drain(consumer)).toMatchObject({ acked: 1, deadLettered: 0 });
  });
});

describe('tracing with an SDK and the in-memory exporter', () => {
  const exporter = new InMemorySpanExporter();
  const contextManager = new AsyncLocalStorageContextManager();
  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h), 'commands');

  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  const spansNamed = (prefix: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix));
  const only = (prefix: string): ReadableSpan => {
    const spans = spansNamed(prefix);
    expect(spans.map((s) => s.name)).toHaveLength(1);
    return spans[0]!;
  };
  const parentOf = (span: ReadableSpan): SpanContext | undefined => span.parentSpanContext;

  it('parents the handler span by the publish span through the signed traceparent', async () => {
    let handlerSpanId: string | undefined;
    const consumer = await commandConsumer(HMAC, () => {
      handlerSpanId = trace.getActiveSpan()?.spanContext().spanId;
    });
    await publishCommand(HMAC);
    await drain(consumer);

    const send = only('send ');
    const processSpan = only('process ');
    const run = only('poll ');
    expect(send.name).toBe(`send ${stream}`);
    expect(send.attributes).toMatchObject({ 'messaging.system': 'redis_streams', 'messaging.operation.type': 'send', 'messaging.destination.name': stream });
    // The entry carries the publish span's context, covered by the signature.
    const stored = (await entriesOf(admin, stream))[0]![1].get('traceparent')!.toString();
    expect(stored).toBe(`00-${send.spanContext().traceId}-${send.spanContext().spanId}-01`);

    expect(processSpan.spanContext().traceId).toBe(send.spanContext().traceId);
    expect(parentOf(processSpan)?.spanId).toBe(send.spanContext().spanId);
    expect(processSpan.attributes).toMatchObject({
      'messaging.system': 'redis_streams',
      'messaging.operation.type': 'process',
      'messaging.destination.name': stream,
      'messaging.consumer.group.name': 'g',
      'saga_streams.verdict': 'ack',
      'saga_streams.deliveries': 1,
      'saga_streams.event_id': 'c1',
    });
    // The run span is linked, and spans the handler starts are children of the entry's span.
    expect(processSpan.links.map((l) => l.context.spanId)).toEqual([run.spanContext().spanId]);
    expect(handlerSpanId).toBe(processSpan.spanContext().spanId);
    expect(run.attributes).toMatchObject({ 'messaging.consumer.group.name': 'g', 'saga_streams.run.acked': 1, 'saga_streams.run.mode': 'drain' });
  });

  it('keeps an explicit traceparent and makes it the parent once verified', async () => {
    const consumer = await commandConsumer(HMAC);
    await publishCommand(HMAC, TRACEPARENT);
    await drain(consumer);
    const processSpan = only('process ');
    expect(processSpan.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(processSpan)?.spanId).toBe(SPAN_ID);
  });

  it('trusts the traceparent of an exclusive stream (trusted by deployment)', async () => {
    const consumer = await commandConsumer(EXCLUSIVE);
    await publishCommand(EXCLUSIVE, TRACEPARENT);
    await drain(consumer);
    expect(parentOf(only('process '))?.spanId).toBe(SPAN_ID);
  });

  it('never parents by a forged traceparent: the entry is dead-lettered and the trace only linked', async () => {
    const consumer = await commandConsumer(HMAC);
    const fields = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), traceparent: TRACEPARENT, keyId: 'k1', key: KEY });
    fields.set('traceparent', OTHER_TRACEPARENT);
    await appendFields(admin, stream, fields);
    expect(await drain(consumer)).toMatchObject({ authRejected: 1 });

    const processSpan = only('process ');
    const run = only('poll ');
    expect(processSpan.spanContext().traceId).not.toBe(OTHER_TRACE_ID);
    expect(processSpan.spanContext().traceId).toBe(run.spanContext().traceId);
    expect(parentOf(processSpan)?.spanId).toBe(run.spanContext().spanId);
    expect(processSpan.links).toEqual([
      expect.objectContaining({ context: expect.objectContaining({ traceId: OTHER_TRACE_ID, spanId: OTHER_SPAN_ID }), attributes: { 'saga_streams.traceparent_untrusted': true } }),
    ]);
    expect(processSpan.attributes).toMatchObject({ 'saga_streams.verdict': 'dead-letter', 'saga_streams.reason': 'signature_invalid' });
  });

  it('never parents by the traceparent of an unauthenticated stream', async () => {
    const seen: string[] = [];
    const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor(seen) });
    await poller.ensureGroup();
    await appendFields(admin, stream, new Map([['event_id', 'e1'], ['payload', 'x'], ['traceparent', TRACEPARENT]]));
    await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });

    expect(seen).toEqual(['x']);
    const processSpan = only('process ');
    expect(processSpan.spanContext().traceId).not.toBe(TRACE_ID);
    expect(parentOf(processSpan)?.spanId).toBe(only('poll ').spanContext().spanId);
    expect(processSpan.links.map((l) => l.context.spanId)).toEqual([SPAN_ID]);
    expect(processSpan.attributes).toMatchObject({ 'saga_streams.verdict': 'ack' });
  });

  it('records a retained entry with its cause', async () => {
    const consumer = await commandConsumer(HMAC, () => {
      throw new Error('database down');
    });
    await publishCommand(HMAC);
    await drain(consumer);
    expect(only('process ').attributes).toMatchObject({ 'saga_streams.verdict': 'retain', 'saga_streams.reason': 'handler_error' });
  });
});
