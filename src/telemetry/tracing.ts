/**
 * OpenTelemetry tracing through `@opentelemetry/api` only: the application registers an SDK
 * (or not); without one every hook here returns after one provider check, so the hot path
 * pays no span allocation, no context switch and no attribute object.
 *
 * Spans: `poll <stream>` per run, `process <stream>` per entry a processor looked at,
 * `send <stream>` per publish call. The parent of a `process` span is the entry's
 * traceparent ONLY when that value is vouched for — covered by a signature that verified,
 * or carried by an exclusive stream (trusted by deployment, SPEC §4). Anything else
 * (an open stream, a failed signature) is a link, never a parent: a forged traceparent
 * cannot graft our spans onto someone else's trace.
 */
import {
  context,
  isSpanContextValid,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { StreamEntry } from '../entry/entry';
import { Fields, fieldText } from '../entry/entry';
import { parseTraceparent } from './traceparent';
import { isPromiseLike } from '../ground/maybe-promise';
import { verdictOfThrown, type Verdict } from '../verdict/verdict';

const TRACER_NAME = 'saga-streams';
/** What the API's proxy delegates to while no SDK is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Attribute names: OTel messaging conventions where one exists, `saga_streams.*` otherwise. */
export const TraceAttributes = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  destination: 'messaging.destination.name',
  group: 'messaging.consumer.group.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  eventId: 'saga_streams.event_id',
  verdict: 'saga_streams.verdict',
  reason: 'saga_streams.reason',
  deliveries: 'saga_streams.deliveries',
  /** On a `process` span's link: why the entry's traceparent was not made the parent. */
  untrustedTraceparent: 'saga_streams.traceparent_untrusted',
  runMode: 'saga_streams.run.mode',
} as const;

export const MESSAGING_SYSTEM = 'redis_streams';

/** The tracer of the registered SDK, or undefined when none is: callers then do nothing. */
export function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  // Another copy of the API (a different class) fails instanceof and counts as registered.
  if (provider instanceof ProxyTracerProvider && provider.getDelegate() === NOOP_PROVIDER) return undefined;
  return provider.getTracer(TRACER_NAME);
}

/** Whether an SDK is registered: without one a processor calls its handler directly, no span and no closure. */
export function tracingActive(): boolean {
  return activeTracer() !== undefined;
}

/** Which consumer an entry span belongs to; set by the round on every DeliveryContext. */
export interface ConsumerScope {
  readonly stream: string;
  readonly group: string;
}

/** W3C traceparent of a span context (version 00). */
export function traceparentOf(spanContext: SpanContext): string {
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/** The remote span context an entry's traceparent names, if it is well-formed. */
function remoteContextOf(traceparent: string | undefined): SpanContext | undefined {
  const parsed = parseTraceparent(traceparent);
  if (parsed === undefined) return undefined;
  return { traceId: parsed.traceId, spanId: parsed.parentId, traceFlags: parsed.flags & 0xff, isRemote: true };
}

function verdictAttributes(span: Span, verdict: Verdict): void {
  span.setAttribute(TraceAttributes.verdict, verdict.kind);
  if (verdict.kind === 'dead-letter') span.setAttribute(TraceAttributes.reason, verdict.reason);
  if (verdict.kind === 'retain') span.setAttribute(TraceAttributes.reason, verdict.cause);
  const failed = verdict.kind === 'dead-letter' || (verdict.kind === 'retain' && verdict.cause.startsWith('handler_'));
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Starts the `process` span of one entry. `trusted`: the origin check vouched for the
 * entry's fields (signature verified, or exclusive stream), so its traceparent may be the
 * parent; otherwise the span stays under the active context (the run span) and links it.
 */
function startEntrySpan(tracer: Tracer, scope: ConsumerScope | undefined, entry: StreamEntry, trusted: boolean): { span: Span; active: Context } {
  const active = context.active();
  const remote = remoteContextOf(fieldText(entry, Fields.traceparent));
  const links: Link[] = [];
  let parent = active;
  if (remote !== undefined && trusted) {
    parent = trace.setSpanContext(active, remote);
    const run = trace.getSpanContext(active);
    if (run !== undefined && isSpanContextValid(run)) links.push({ context: run });
  } else if (remote !== undefined) {
    links.push({ context: remote, attributes: { [TraceAttributes.untrustedTraceparent]: true } });
  }
  const attributes: Attributes = {
    [TraceAttributes.system]: MESSAGING_SYSTEM,
    [TraceAttributes.operationType]: 'process',
    [TraceAttributes.messageId]: entry.id,
    [TraceAttributes.deliveries]: entry.deliveries,
  };
  if (scope !== undefined) {
    attributes[TraceAttributes.destination] = scope.stream;
    attributes[TraceAttributes.group] = scope.group;
  }
  const eventId = fieldText(entry, Fields.eventId);
  if (eventId !== undefined) attributes[TraceAttributes.eventId] = eventId;
  const name = scope === undefined ? 'process' : `process ${scope.stream}`;
  const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes, links }, parent);
  return { span, active: trace.setSpan(parent, span) };
}

/**
 * Runs `handle` (the handler and the verdict it maps to) inside the entry's span, so spans
 * the handler starts — a publish of the saga's next command — are its children. Without
 * an SDK it is just `handle()`: a verdict handed back synchronously stays synchronous.
 */
export function traceHandling(
  scope: ConsumerScope | undefined,
  entry: StreamEntry,
  trusted: boolean,
  handle: () => Promise<Verdict>,
): Promise<Verdict>;
export function traceHandling(
  scope: ConsumerScope | undefined,
  entry: StreamEntry,
  trusted: boolean,
  handle: () => Verdict | Promise<Verdict>,
): Verdict | Promise<Verdict>;
export function traceHandling(
  scope: ConsumerScope | undefined,
  entry: StreamEntry,
  trusted: boolean,
  handle: () => Verdict | Promise<Verdict>,
): Verdict | Promise<Verdict> {
  const tracer = activeTracer();
  if (tracer === undefined) return handle();
  const { span, active } = startEntrySpan(tracer, scope, entry, trusted);
  const failed = (error: unknown): never => {
    verdictAttributes(span, verdictOfThrown(error));
    span.end();
    throw error;
  };
  const ended = (verdict: Verdict): Verdict => {
    verdictAttributes(span, verdict);
    span.end();
    return verdict;
  };
  let answer: Verdict | Promise<Verdict>;
  try {
    answer = context.with(active, handle);
  } catch (error) {
    return failed(error);
  }
  return isPromiseLike(answer) ? Promise.resolve(answer).then(ended, failed) : ended(answer);
}

/** An entry refused before any handler (origin, identity fields, payload): a span with its verdict. */
export function traceRefused(scope: ConsumerScope | undefined, entry: StreamEntry, verdict: Verdict): void {
  const tracer = activeTracer();
  if (tracer === undefined) return;
  // A refused origin vouches for nothing: its traceparent is only linked.
  const { span } = startEntrySpan(tracer, scope, entry, false);
  verdictAttributes(span, verdict);
  span.end();
}

/** Summary counters a run span carries (a subset of RunReport). */
export interface RunTotals {
  readonly handled: number;
  readonly acked: number;
  readonly deadLettered: number;
  readonly retained: number;
  readonly authRejected: number;
  readonly rounds: number;
  readonly roundTrips: number;
}

/** The `poll <stream>` span around one run; entry spans of the run link to it. */
export async function traceRun<T extends RunTotals>(scope: ConsumerScope, mode: string, run: () => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return run();
  const span = tracer.startSpan(`poll ${scope.stream}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      [TraceAttributes.system]: MESSAGING_SYSTEM,
      [TraceAttributes.destination]: scope.stream,
      [TraceAttributes.group]: scope.group,
      [TraceAttributes.runMode]: mode,
    },
  });
  try {
    const report = await context.with(trace.setSpan(context.active(), span), run);
    span.setAttributes({
      'saga_streams.run.handled': report.handled,
      'saga_streams.run.acked': report.acked,
      'saga_streams.run.dead_lettered': report.deadLettered,
      'saga_streams.run.retained': report.retained,
      'saga_streams.run.auth_rejected': report.authRejected,
      'saga_streams.run.rounds': report.rounds,
      'saga_streams.run.round_trips': report.roundTrips,
    });
    return report;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The `send` span around one publish call. `send` receives the traceparent to write into
 * entries that carry none: the active span's (this span, under an SDK), so the consumer's
 * `process` span becomes its child once the signature verifies. Without an SDK, an active
 * span context (a propagated one) still passes on; otherwise undefined.
 */
export async function tracePublish<T>(streams: readonly string[], count: number, send: (traceparent: string | undefined) => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return send(activeTraceparent());
  const single = new Set(streams).size === 1 ? streams[0] : undefined;
  const attributes: Attributes = { [TraceAttributes.system]: MESSAGING_SYSTEM, [TraceAttributes.operationType]: 'send' };
  if (single !== undefined) attributes[TraceAttributes.destination] = single;
  if (count !== 1) attributes[TraceAttributes.batchCount] = count;
  const span = tracer.startSpan(single === undefined ? 'send' : `send ${single}`, { kind: SpanKind.PRODUCER, attributes });
  const spanContext = span.spanContext();
  try {
    return await context.with(trace.setSpan(context.active(), span), () =>
      send(isSpanContextValid(spanContext) ? traceparentOf(spanContext) : undefined),
    );
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}

/** The active span's traceparent, if a valid span context is active. */
export function activeTraceparent(): string | undefined {
  const active = trace.getSpanContext(context.active());
  return active !== undefined && isSpanContextValid(active) ? traceparentOf(active) : undefined;
}

/**
 * The `<method> <route>` SERVER span of an HTTP request, parented by its `traceparent`
 * header (as any HTTP server's span is); `serve` answers the response status.
 */
export async function traceRequest(method: string, route: string, traceparent: string | undefined, serve: () => Promise<number>): Promise<void> {
  const tracer = activeTracer();
  if (tracer === undefined) {
    await serve();
    return;
  }
  const remote = remoteContextOf(traceparent);
  const parent = remote === undefined ? context.active() : trace.setSpanContext(context.active(), remote);
  const span = tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } }, parent);
  try {
    const status = await context.with(trace.setSpan(parent, span), serve);
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}
