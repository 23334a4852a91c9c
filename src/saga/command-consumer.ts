/**
 * Command consumer (SPEC §9): a participant's stream carries commands for exactly one
 * (workflow, definition version, digest, step). A trusted producer still cannot push a
 * command for anything else here: mismatches are dead-lettered before the handler.
 * A capability consumer (a participant that knows its step, not the whole definition)
 * is bound the same way without the digest.
 */
import * as z from 'zod/mini';
import { DeadLetterReasons } from '../auth/reasons';
import { problemsOf } from '../ground/config-problems';
import type { Poller } from '../consume/poller';
import { jsonPayload } from '../consume/processor';
import { Verdicts, type Verdict } from '../verdict/verdict';
import { buildSagaPoller, type SagaConsumerOptions } from './consumer-options';
import { commandEnvelopeSchema, definitionDigestSchema, type CommandEnvelope } from './envelopes';
import { createEnvelopeProcessor } from './envelope-processor';
import { IN_ENGLISH } from '../ground/zod-messages';

/** Built when the first consumer is (on a Lambda: its first invocation), not on import. */
const capabilityRoute = () =>
  z.strictObject({
    workflow: z.string().check(z.minLength(1), z.maxLength(256)),
    definitionVersion: z.int().check(z.positive()),
    step: z.string().check(z.minLength(1), z.maxLength(256)),
  });
const capabilityRouteSchema = z.lazy(capabilityRoute);
const exactRouteSchema = z.lazy(() => z.extend(capabilityRoute(), { definitionDigest: definitionDigestSchema }));

export type CapabilityRoute = z.infer<typeof capabilityRouteSchema>;
export type CommandRoute = z.infer<typeof exactRouteSchema>;

export interface CommandConsumerOptions extends SagaConsumerOptions<CommandEnvelope> {
  readonly route: CommandRoute;
}

export interface CapabilityCommandConsumerOptions extends SagaConsumerOptions<CommandEnvelope> {
  readonly route: CapabilityRoute;
}

/** First mismatch between a command and the route, in the envelope's own field order. */
export function commandRouteGate(route: CapabilityRoute & { definitionDigest?: string }) {
  return (envelope: CommandEnvelope): Verdict | undefined => {
    if (envelope.workflow !== route.workflow) return Verdicts.deadLetter(DeadLetterReasons.routeWorkflowMismatch);
    if (envelope.definition_version !== route.definitionVersion) return Verdicts.deadLetter(DeadLetterReasons.routeVersionMismatch);
    if (route.definitionDigest !== undefined && envelope.definition_digest !== route.definitionDigest) {
      return Verdicts.deadLetter(DeadLetterReasons.routeDigestMismatch);
    }
    if (envelope.step !== route.step) return Verdicts.deadLetter(DeadLetterReasons.routeStepMismatch);
    return undefined;
  };
}

function build(subject: string, options: SagaConsumerOptions<CommandEnvelope>, schema: z.ZodMiniType, routeInput: unknown): Poller {
  const parsed = schema.safeParse(routeInput, IN_ENGLISH);
  const problems = parsed.success ? [] : problemsOf(parsed.error).map((p) => ({ ...p, path: p.path ? `route.${p.path}` : 'route' }));
  const route = Object.freeze({ ...(parsed.data as CommandRoute) });
  return buildSagaPoller(subject, options, problems, (stream, auth, flowOn) =>
    createEnvelopeProcessor({
      stream,
      auth,
      decode: jsonPayload(commandEnvelopeSchema),
      idOf: (envelope) => envelope.command_id,
      ...(flowOn ? { instanceOf: (envelope: { instance_id: string }) => envelope.instance_id } : {}),
      gate: commandRouteGate(route),
      handler: options.handler,
      hmac: options.hmac,
    }),
  );
}

/** A consumer bound to one workflow, definition version, definition digest and step. */
export function createCommandConsumer(options: CommandConsumerOptions): Poller {
  return build('command consumer', options, exactRouteSchema, options.route);
}

/** A consumer bound to one workflow, definition version and step, accepting any digest. */
export function createCapabilityCommandConsumer(options: CapabilityCommandConsumerOptions): Poller {
  return build('capability command consumer', options, capabilityRouteSchema, options.route);
}
