/**
 * Result consumer (SPEC §9): the orchestrator's stream of step results. The handler learns
 * the authenticated producer; with `allowedProducers`, a result for a step is accepted only
 * from the producers listed for that step (a step not listed accepts nobody), and anyone
 * else's is dead-lettered as an auth rejection.
 */
import * as z from 'zod/mini';
import { DeadLetterReasons } from '../auth/reasons';
import { problemsOf } from '../ground/config-problems';
import type { Poller } from '../consume/poller';
import { jsonPayload } from '../consume/processor';
import { Verdicts, type Verdict } from '../verdict/verdict';
import { buildSagaPoller, type SagaConsumerOptions } from './consumer-options';
import { resultEnvelopeSchema, type ResultEnvelope } from './envelopes';
import { createEnvelopeProcessor } from './envelope-processor';
import { IN_ENGLISH } from '../ground/zod-messages';

/** Built when the first result consumer is, not on import. */
const allowedProducersSchema = z.lazy(() =>
  z.optional(z.record(z.string().check(z.minLength(1)), z.array(z.string().check(z.minLength(1))).check(z.minLength(1)))),
);

export interface ResultConsumerOptions extends SagaConsumerOptions<ResultEnvelope> {
  /** step → producers allowed to report its results. Omit to accept any authenticated producer. */
  readonly allowedProducers?: Readonly<Record<string, readonly string[]>>;
}

export function producerGate(allowed: Readonly<Record<string, readonly string[]>> | undefined) {
  if (allowed === undefined) return (): Verdict | undefined => undefined;
  const byStep = new Map(Object.entries(allowed).map(([step, producers]) => [step, new Set(producers)]));
  return (envelope: ResultEnvelope, producer: string): Verdict | undefined =>
    byStep.get(envelope.step)?.has(producer) ? undefined : Verdicts.deadLetter(DeadLetterReasons.producerNotAllowed, { auth: true });
}

export function createResultConsumer(options: ResultConsumerOptions): Poller {
  const parsed = allowedProducersSchema.safeParse(options.allowedProducers, IN_ENGLISH);
  const problems = parsed.success
    ? []
    : problemsOf(parsed.error).map((p) => ({ ...p, path: p.path ? `allowedProducers.${p.path}` : 'allowedProducers' }));
  const gate = producerGate(parsed.success ? parsed.data : undefined);
  return buildSagaPoller('result consumer', options, problems, (stream, auth) =>
    createEnvelopeProcessor({
      stream,
      auth,
      decode: jsonPayload(resultEnvelopeSchema),
      idOf: (envelope) => envelope.result_id,
      gate,
      handler: options.handler,
      hmac: options.hmac,
    }),
  );
}
