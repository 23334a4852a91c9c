/**
 * Per-container state: the function's secrets are resolved and its runtime (Redis port,
 * pollers, publishers) built once, on the first invocation, then reused while the
 * container is warm. A failed start is not cached, so the next invocation tries again.
 */
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { formatLogLine } from '../../../src/deployment/log-line';
import { createRuntime, type DeploymentRuntime } from '../../../src/deployment/runtime';
import { nodeHmac } from '../../../src/node/crypto';
import type { SecretEnv } from '../../../src/deployment/secrets';
import type { ResolvedDeps } from './deps';
import { secretNamesOf, type FunctionRole } from './roles';
import { resolveSecretEnv } from './secret-env';
import { sqsWakeUp, WAKE_UP_QUEUES_ENV } from './sqs-wake-up';

export interface Started {
  readonly runtime: DeploymentRuntime;
  /** The environment with this function's secrets resolved. */
  readonly env: SecretEnv;
}

/** Runs `start` on first call and shares its result; a failure is forgotten, so the next call retries. */
export function onceUntilFailure<T>(start: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  return () => {
    started ??= start().catch((error: unknown) => {
      started = undefined;
      throw error;
    });
    return started;
  };
}

/**
 * An isolated consumer's function (roles.ts): the one consumer it polls, and the container its
 * scheduled and wake-up handlers share (one runtime, one connection).
 */
export interface ConsumerScope {
  readonly consumer: string;
  readonly container: () => Promise<Started>;
}

/** `only`: the one consumer an isolated function polls (its secrets only are resolved). */
export function lambdaContainer(config: DeploymentConfig, deps: ResolvedDeps, role: FunctionRole, only?: string): () => Promise<Started> {
  return onceUntilFailure(async () => {
    const env = await resolveSecretEnv(deps.env, secretNamesOf(config, role, only), deps.fetchSecret);
    const port = await deps.connect(config, env);
    // Every publisher of the container wakes the next step: the publish API's and the
    // handlers' follow-up events alike (the stack gives publishing functions the queue URL).
    const wakeUp = role === 'trim' ? undefined : sqsWakeUpFor(role, config, env, deps);
    const url = config.data.postgres ? env[config.data.postgres.urlEnv] : undefined;
    // node-postgres is loaded only by deployments that have a database: a TCP-only poll
    // function neither bundles it eagerly nor pays its import at cold start.
    const database = url
      ? async () => (await import('../../../src/postgres/pg')).connectPg({ connectionString: url, max: 2 })
      : undefined;
    return { runtime: createRuntime(config, { port, env, hmac: nodeHmac, now: deps.now, wakeUp, log: deps.log, database }), env };
  });
}

/**
 * SQS wake-ups when the deployment declares them. The publish function must have the queue
 * URL (a missing one fails its start, naming the variable); a poll function without it just
 * leaves follow-up steps to their schedule.
 */
function sqsWakeUpFor(role: FunctionRole, config: DeploymentConfig, env: SecretEnv, deps: ResolvedDeps) {
  const target = config.wakeUpTarget('sqs');
  if (!target) return undefined;
  if (role !== 'publish' && !env[target.queueUrlEnv] && !env[WAKE_UP_QUEUES_ENV]) {
    deps.log(formatLogLine({ level: 'warn', msg: 'wake-ups disabled', deployment: config.name, timestamp: deps.now(), role, detail: { missing: target.queueUrlEnv } }));
    return undefined;
  }
  return sqsWakeUp(config, env, deps.sqs);
}
