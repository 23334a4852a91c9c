/**
 * What a Lambda handler depends on besides its deployment config. Entry files take the
 * defaults (process environment, the secrets extension, a real connection, the clock,
 * stdout); tests pass their own.
 */
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import type { SecretEnv } from '../../../src/deployment/secrets';
import type { RedisPort } from '../../../src/redis/port';
import type { SecretFetcher } from './secret-env';
import type { SqsSender } from './sqs-wake-up';
import { extensionSecretFetcher } from './secrets-extension';

export interface LambdaDeps {
  /** Secret pointers (`X_SECRET_ID`) and plain values. Default: `process.env`. */
  readonly env?: SecretEnv;
  /** Reads one secret from its store. Default: the Parameters and Secrets extension. */
  readonly fetchSecret?: SecretFetcher;
  /** Opens the container's Redis port. Default: TCP when configured, else REST. */
  readonly connect?: (config: DeploymentConfig, env: SecretEnv) => RedisPort | Promise<RedisPort>;
  readonly now?: () => number;
  /** Writes one log line. Default: raw stdout, so each line reaches CloudWatch as pure JSON (EMF). */
  readonly log?: (line: string) => void;
  /** Sends wake-up messages. Default: an SQSClient for the function's region. */
  readonly sqs?: SqsSender;
}

export type ResolvedDeps = Required<Omit<LambdaDeps, 'sqs'>> & Pick<LambdaDeps, 'sqs'>;

/**
 * TCP when configured, else REST. Each client is imported only when chosen, so a bundle can
 * leave the other one out (the CDK construct marks ioredis external for REST-only
 * deployments), and a TCP Lambda never evaluates the REST client at start-up.
 */
export async function connectDeployment(config: DeploymentConfig, env: SecretEnv): Promise<RedisPort> {
  if (config.data.redis.tcp) return (await import('../../../src/deployment/connect-tcp')).connectTcp(config, env);
  return (await import('../../../src/deployment/connect-rest')).connectRest(config, env);
}

export function withDefaults(deps: LambdaDeps): ResolvedDeps {
  const env = deps.env ?? process.env;
  return {
    env,
    fetchSecret: deps.fetchSecret ?? extensionSecretFetcher({ env }),
    connect: deps.connect ?? connectDeployment,
    now: deps.now ?? Date.now,
    log: deps.log ?? ((line) => void process.stdout.write(`${line}\n`)),
    sqs: deps.sqs,
  };
}
