/**
 * `GET /readyz` for a deployment (SPEC §6.2, §8): Redis answers PING, every consumer's
 * group exists (ensured idempotently, which also surfaces missing ACL rights), and every
 * producer's publisher can be built (its signing keys are present and valid). The public
 * answer names each check and its error code only; messages go to the log.
 */
import type { DeploymentRuntime } from '../deployment/runtime';
import { checkReadiness, type Readiness } from '../probes/readiness';

export interface PublicCheck {
  readonly check: string;
  readonly subject: string;
  readonly ok: boolean;
  readonly code?: string;
}

export async function deploymentReadiness(runtime: DeploymentRuntime): Promise<Readiness> {
  const producers = Object.keys(runtime.config.data.publishApi?.producers ?? {});
  return checkReadiness({
    port: runtime.port,
    consumers: [...runtime.config.consumers.values()].map((plan) => plan.config),
    extra: producers.map((producer) => ({ name: 'publisher', subject: producer, run: () => runtime.publisherFor(producer) })),
  });
}

export function publicChecks(readiness: Readiness): PublicCheck[] {
  return readiness.checks.map(({ check, subject, ok, code }) => (code === undefined ? { check, subject, ok } : { check, subject, ok, code }));
}
