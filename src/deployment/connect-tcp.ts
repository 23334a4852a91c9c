/**
 * The TCP port of a deployment (ioredis; Node, Lambda and the local stack). Kept apart from
 * the REST one so a Worker bundle never pulls in ioredis.
 */
import { ConfigError } from '../ground/errors';
import { connectIoredis, connectIoredisCluster } from '../redis/ioredis-port';
import type { RedisPort } from '../redis/port';
import type { DeploymentConfig } from './define-config';
import { readSecrets, type SecretEnv } from './secrets';

/** `redis.tcp.urlEnv` holds a URL, or for Cluster a comma-separated `host:port` list. */
export function connectTcp(config: DeploymentConfig, env: SecretEnv): RedisPort {
  const tcp = config.data.redis.tcp;
  if (!tcp) throw new ConfigError('deployment config', [{ path: 'redis.tcp', message: 'is required to connect over TCP' }]);
  const value = readSecrets(env, [tcp.urlEnv], 'redis connection').get(tcp.urlEnv)!;
  if (!tcp.cluster) return connectIoredis(value);
  const urls = value.split(',').map((part) => (part.includes('://') ? new URL(part) : new URL(`redis://${part}`)));
  const nodes = urls.map((url) => ({ host: url.hostname, port: Number(url.port || 6379) }));
  // Credentials (and TLS) given on the first node apply to every node of the Cluster.
  const first = urls[0]!;
  const redisOptions = {
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
    ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return connectIoredisCluster(nodes, { redisOptions });
}
