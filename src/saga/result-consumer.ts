/**
 * Result consumer (SPEC §9): the orchestrator's stream of step results. The handler learns
 * the authenticated producer; with `allowedProducers`, a result for a step is accepted only
 * from the producers listed for that step (a step not listed accepts nobody), and anyone
 * else's is dead-lettered as an auth rejection. With `timeoutProducer` (saga timeouts,
 * timeouts.ts), that producer — the orchestrator's own identity, which must hold a key on the
 * results stream to sign its timeouts — may send step timeouts for any step and nothing else,
 * and nobody else may send a step timeout: both are dead-lettered the same way, so the
 * orchestrator's key cannot be used to forge a participant's answer, nor a participant's to
 * fake a timeout.
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
import { isStepTimeout } from './timeouts';
import { IN_ENGLISH } from '../ground/zod-messages';

/** Built when the first result consumer is, not on import. */
const allowedProducersSchema = z.lazy(() =>
  z.optional(z.record(z.string().check(z.minLength(1)), z.array(z.string().check(z.minLength(1))).check(z.minLength(1)))),
);
const timeoutProducerSchema = z.lazy(() => z.optional(z.string().check(z.minLength(1), z.maxLength(256))));

export interface ResultConsumerOptions extends SagaConsumerOptions<ResultEnvelope> {
  /** step → producers allowed to report its results. Omit to accept any authenticated producer. */
  readonly allowedProducers?: Readonly<Record<string, readonly string[]>>;
  /** The identity that signs step timeouts (stepTimeout's `producer`): see the module comment. */
  readonly timeoutProducer?: string;
}

export function producerGate(allowed: Readonly<Record<string, readonly string[]>> | undefined, timeoutProducer?: string) {
  const byStep = allowed === undefined ? undefined : new Map(Object.entries(allowed).map(([step, producers]) => [step, new Set(producers)]));
  const refuse = () => Verdicts.deadLetter(DeadLetterReasons.producerNotAllowed, { auth: true });
  return (envelope: ResultEnvelope, producer: string): Verdict | undefined => {
    if (timeoutProducer !== undefined && (producer === timeoutProducer || isStepTimeout(envelope))) {
      return producer === timeoutProducer && isStepTimeout(envelope) ? undefined : refuse();
    }
    if (byStep === undefined) return undefined;
    return byStep.get(envelope.step)?.has(producer) ? undefined : refuse();
  };
}

export function createResultConsumer(options: ResultConsumerOptions): Poller {
  const parsed = allowedProducersSchema.safeParse(options.allowedProducers, IN_ENGLISH);
  const timeouts = timeoutProducerSchema.safeParse(options.timeoutProducer, IN_ENGLISH);
  const problems = [
    ...(parsed.success ? [] : problemsOf(parsed.error).map((p) => ({ ...p, path: p.path ? `allowedProducers.${p.path}` : 'allowedProducers' }))),
    ...(timeouts.success ? [] : problemsOf(timeouts.error).map((p) => ({ ...p, path: 'timeoutProducer' }))),
  ];
  const gate = producerGate(parsed.success ? parsed.data : undefined, timeouts.success ? timeouts.data : undefined);
  return buildSagaPoller('result consumer', options, problems, (stream, auth, flowOn) =>
    createEnvelopeProcessor({
      stream,
      auth,
      decode: jsonPayload(resultEnvelopeSchema),
      idOf: (envelope) => envelope.result_id,
      ...(flowOn ? { instanceOf: (envelope: { instance_id: string }) => envelope.instance_id } : {}),
      gate,
      handler: options.handler,
      hmac: options.hmac,
    }),
  );
}
