/**
 * `npx tsx bench/tracing-overhead.ts [iterations]`: issue 17 §2, the cost the tracing hooks
 * add per handled entry, in process (no Redis): a bare handler call, the same call through
 * traceHandling with no SDK registered, and with an SDK (BasicTracerProvider, AsyncLocalStorage
 * context manager, a processor that drops spans), and the bare call again with the context
 * manager enabled. Prints ns per entry, median of 7 passes.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { StreamEntry } from '../src/entry/entry';
import { traceHandling } from '../src/telemetry/tracing';
import { Verdicts, type Verdict } from '../src/verdict/verdict';

const iterations = Number(process.argv[2] ?? 200_000);
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const bytes = (text: string) => new TextEncoder().encode(text);
const entry: StreamEntry = {
  id: '1-0',
  deliveries: 1,
  reclaimed: false,
  repeatsFieldName: false,
  fields: new Map([
    ['event_id', bytes('e1')],
    ['payload', bytes('x')],
    ['traceparent', bytes(TRACEPARENT)],
  ]),
};
const scope = { stream: 'orders', group: 'g' };
const ACK = Verdicts.ack();
const handle = async (): Promise<Verdict> => ACK;

async function nsPerEntry(step: () => Promise<Verdict>): Promise<number> {
  const passes: number[] = [];
  for (let pass = 0; pass < 7; pass += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < iterations; i += 1) await step();
    passes.push(Number(process.hrtime.bigint() - started) / iterations);
  }
  return passes.sort((a, b) => a - b)[3]!;
}

const bare = await nsPerEntry(handle);
const noSdk = await nsPerEntry(() => traceHandling(scope, entry, true, handle));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] }));
const withSdk = await nsPerEntry(() => traceHandling(scope, entry, true, handle));
// The same bare call once the context manager is enabled: its share of the SDK's cost.
const bareWithContextManager = await nsPerEntry(handle);
const ns = { bare, noSdk, withSdk, bareWithContextManager };
console.log(JSON.stringify({ iterations, nsPerEntry: Object.fromEntries(Object.entries(ns).map(([k, v]) => [k, Math.round(v)])) }));
