/**
 * Function timeouts derived from the deployment's budgets (functions/aws/lib/budget.ts):
 * a poll function's timeout is its longest consumer run budget plus the start-up allowance
 * and the reserve, so no run can hold entries longer than that. Every consumer it polls
 * must have `minIdleMs` above it, or another run could reclaim entries a live run still
 * handles (SPEC §5.2) — a config that breaks this is refused at synthesis.
 */
import type { ConfigProblem } from '../../src/ground/errors';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import {
  LAMBDA_MAX_TIMEOUT_MS,
  POLL_RESERVE_MS,
  pollTimeoutMs,
  PUBLISH_TIMEOUT_MS,
  STARTUP_ALLOWANCE_MS,
  TRIM_TIMEOUT_MS,
} from '../../functions/aws/lib/budget';
import { consumersOf, type FunctionRole } from '../../functions/aws/lib/roles';

export type FunctionTimeouts = Readonly<Record<FunctionRole, number>>;

function pollRoleProblems(config: DeploymentConfig, role: 'poll' | 'wake-up' | 'consumer', timeoutMs: number, only?: string): ConfigProblem[] {
  const plans = consumersOf(config, role, only);
  if (plans.length === 0) return [];
  const longest = Math.max(...plans.map((plan) => plan.config.runBudgetMs));
  const derivation = `longest runBudgetMs ${longest} + start-up ${STARTUP_ALLOWANCE_MS} + reserve ${POLL_RESERVE_MS}, in whole seconds`;
  if (timeoutMs > LAMBDA_MAX_TIMEOUT_MS) {
    return [{ path: 'consumers', message: `the ${role} function would need a ${timeoutMs} ms timeout (${derivation}); Lambda allows ${LAMBDA_MAX_TIMEOUT_MS} ms` }];
  }
  return plans
    .filter((plan) => plan.config.minIdleMs <= timeoutMs)
    .map((plan) => ({
      path: `consumers.${plan.name}.settings.minIdleMs`,
      message:
        `${plan.config.minIdleMs} ms must exceed the ${role} function's timeout of ${timeoutMs} ms (${derivation}), ` +
        'or a live run could have its entries reclaimed: raise minIdleMs or lower the runBudgetMs of the consumers it shares the function with',
    }));
}

/** Each function's timeout in ms, and the problems that make the config undeployable. */
export function deriveTimeouts(config: DeploymentConfig, isolated = false): { timeouts: FunctionTimeouts; problems: ConfigProblem[] } {
  const timeouts: FunctionTimeouts = {
    poll: pollTimeoutMs(consumersOf(config, 'poll').map((plan) => plan.config)),
    'wake-up': pollTimeoutMs(consumersOf(config, 'wake-up').map((plan) => plan.config)),
    trim: TRIM_TIMEOUT_MS,
    publish: PUBLISH_TIMEOUT_MS,
    // Isolated layout: per consumer (consumerTimeoutMs); the relay holds no entries, so no minIdle bound.
    consumer: pollTimeoutMs([...config.consumers.values()].map((plan) => plan.config)),
    relay: TRIM_TIMEOUT_MS,
  };
  // Isolated: each consumer shares its function with no other, so only its own budget counts.
  const problems = isolated
    ? [...config.consumers.keys()].flatMap((name) => pollRoleProblems(config, 'consumer', consumerTimeoutMs(config, name), name))
    : [...pollRoleProblems(config, 'poll', timeouts.poll), ...pollRoleProblems(config, 'wake-up', timeouts['wake-up'])];
  return { timeouts, problems };
}

/** The timeout of one consumer's own function (isolated layout): its run budget only. */
export function consumerTimeoutMs(config: DeploymentConfig, consumer: string): number {
  return pollTimeoutMs([config.consumers.get(consumer)!.config]);
}
