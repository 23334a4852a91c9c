/**
 * What each Lambda function of a deployment runs and which secrets it reads. The handlers
 * resolve exactly these secrets and the CDK stack grants exactly these, so a function can
 * read only what it uses.
 *
 * Two layouts: shared (one `poll` function for every scheduled consumer, one `wake-up`
 * function for every wake-up consumer; the relay runs in `poll`) and isolated (the CDK
 * prop `isolateConsumers`: one `consumer` function per consumer — named by CONSUMER_ENV —
 * holding that consumer's keys only, and the relay in a `relay` function of its own).
 */
import type { ConsumerPlan, DeploymentConfig } from '../../../src/deployment/define-config';

export const FUNCTION_ROLES = ['poll', 'wake-up', 'trim', 'publish', 'consumer', 'relay'] as const;
export type FunctionRole = (typeof FUNCTION_ROLES)[number];

/** The variable naming the one consumer a `consumer` function polls (set by the CDK construct). */
export const CONSUMER_ENV = 'SAGA_STREAMS_CONSUMER';

/**
 * Consumers a function polls: scheduled ones for `poll`, wake-up ones for `wake-up`, the
 * named one for `consumer`; `only` narrows any of them to one consumer.
 */
export function consumersOf(config: DeploymentConfig, role: FunctionRole, only?: string): ConsumerPlan[] {
  const plans = [...config.consumers.values()].filter((plan) => only === undefined || plan.name === only);
  if (role === 'poll') return plans.filter((plan) => plan.schedule !== undefined);
  if (role === 'wake-up') return plans.filter((plan) => plan.wakeUp);
  if (role === 'consumer') return only === undefined ? [] : plans;
  return [];
}

/** The Redis connection secrets actually used on Lambda: TCP when configured, else REST. */
export function redisSecretNames(config: DeploymentConfig): string[] {
  const { tcp, rest } = config.data.redis;
  if (tcp) return [tcp.urlEnv];
  return rest ? [rest.urlEnv, rest.tokenEnv] : [];
}

export function secretNamesOf(config: DeploymentConfig, role: FunctionRole, only?: string): string[] {
  const own = role === 'publish' ? config.secrets.publishApi : consumersOf(config, role, only).flatMap((plan) => config.secrets.consumer(plan.name));
  // The relay reads the database and signs as every publishing producer; the shared poll
  // function runs it (unless narrowed to one consumer). Handlers reach the database.
  const relay = role === 'relay' || (role === 'poll' && only === undefined && config.data.postgres?.relay !== undefined);
  const postgres = relay ? config.secrets.relay : role === 'publish' || role === 'trim' ? [] : config.secrets.database;
  return [...new Set([...redisSecretNames(config), ...own, ...postgres])].sort();
}
