/** The REST port of a deployment (the Upstash REST protocol over fetch; Workers and any edge runtime). */
import { ConfigError } from '../ground/errors';
import type { RedisPort } from '../redis/port';
import { connectUpstash } from '../redis/upstash-port';
import type { DeploymentConfig } from './define-config';
import { readSecrets, type SecretEnv } from './secrets';

export function connectRest(config: DeploymentConfig, env: SecretEnv): RedisPort {
  const rest = config.data.redis.rest;
  if (!rest) throw new ConfigError('deployment config', [{ path: 'redis.rest', message: 'is required to connect over REST' }]);
  const secrets = readSecrets(env, [rest.urlEnv, rest.tokenEnv], 'redis connection');
  return connectUpstash({ url: secrets.get(rest.urlEnv)!, token: secrets.get(rest.tokenEnv)! });
}
