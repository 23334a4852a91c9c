/**
 * What each Lambda function of a deployment runs and which secrets it reads. The handlers
 * resolve exactly these secrets and the CDK stack grants exactly these, so a function can
 * read only what it uses.
 */
import type { ConsumerPlan, DeploymentConfig } from '../../../src/deployment/define-config';

export const FUNCTION_ROLES = ['poll', 'wake-up', 'trim', 'publish'] as const;
export type FunctionRole = (typeof FUNCTION_ROLES)[number];

/** Consumers a function polls: scheduled ones for `poll`, wake-up ones for `wake-up`. */
export function consumersOf(config: DeploymentConfig, role: FunctionRole): ConsumerPlan[] {
  const plans = [...config.consumers.values()];
  if (role === 'poll') return plans.filter((plan) => plan.schedule !== undefined);
  if (role === 'wake-up') return plans.filter((plan) => plan.wakeUp);
  return [];
}

/** The Redis connection secrets actually used on Lambda: TCP when configured, else REST. */
export function redisSecretNames(config: DeploymentConfig): string[] {
  const { tcp, rest } = config.data.redis;
  if (tcp) return [tcp.urlEnv];
  return rest ? [rest.urlEnv, rest.tokenEnv] : [];
}

export function secretNamesOf(config: DeploymentConfig, role: FunctionRole): string[] {
  const own =
    role === 'publish'
      ? config.secrets.publishApi
      : consumersOf(config, role).flatMap((plan) => config.secrets.consumer(plan.name));
  // Handlers reach the database; the scheduled poll function also runs the outbox relay.
  const postgres = role === 'poll' && config.data.postgres?.relay ? config.secrets.relay : role === 'publish' || role === 'trim' ? [] : config.secrets.database;
  return [...new Set([...redisSecretNames(config), ...own, ...postgres])].sort();
}
