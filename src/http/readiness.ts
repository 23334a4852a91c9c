/**
 * `GET /readyz` for a deployment (SPEC §6.2, §8): Redis answers PING, every consumer's
 * group exists (ensured idempotently, which also surfaces missing ACL rights), and every
 * producer's publisher can be built (its signing keys are present and valid) and gets from
 * the server what its durability option needs. The public answer names each check and its
 * error code only; messages go to the log.
 */
import type { DeploymentRuntime } from '../deployment/runtime';
import { checkReadiness, type Readiness } from '../probes/readiness';
import { boundByDeadline } from '../redis/deadline';
import { withTimeLimit } from '../ground/time-limit';

/**
 * How long /readyz may wait for Redis. A probe must answer before its caller's own timeout
 * (load balancers and orchestrators wait 1–5 s): waiting out the client's 10 s exchange
 * timeout, once for PING and again for the groups, made it answer after 20 s under a frozen
 * Redis — a timeout the caller cannot tell from a dead process.
 */
export const READINESS_TIMEOUT_MS = 1_000;

export interface PublicCheck {
  readonly check: string;
  readonly subject: string;
  readonly ok: boolean;
  readonly code?: string;
}

export async function deploymentReadiness(runtime: DeploymentRuntime): Promise<Readiness> {
  const producers = Object.keys(runtime.config.data.publishApi?.producers ?? {});
  const port = boundByDeadline(runtime.port, Date.now() + READINESS_TIMEOUT_MS, Date.now, `the readiness deadline (${READINESS_TIMEOUT_MS} ms)`);
  return checkReadiness({
    port,
    consumers: [...runtime.config.consumers.values()].map((plan) => plan.config),
    extra: producers.map((producer) => ({ name: 'publisher', subject: producer, run: () => publisherReady(runtime, producer) })),
  });
}

/**
 * The producer's publisher can be built (its signing keys are present and valid) and the
 * server gives what its config asks (durability: WAITAOF, AOF on), learned within the probe's
 * time (once per process: then it is cached).
 */
async function publisherReady(runtime: DeploymentRuntime, producer: string): Promise<void> {
  await withTimeLimit(runtime.publisherFor(producer).ready(), READINESS_TIMEOUT_MS);
}

export function publicChecks(readiness: Readiness): PublicCheck[] {
  return readiness.checks.map(({ check, subject, ok, code }) => (code === undefined ? { check, subject, ok } : { check, subject, ok, code }));
}
