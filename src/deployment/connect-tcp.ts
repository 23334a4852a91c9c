/**
 * The TCP port of a deployment (ioredis; Node, Lambda and the local stack). Kept apart from
 * the REST one so a Worker bundle never pulls in ioredis.
 */
import { ConfigError } from '../ground/errors';
import { connectIoredis, connectIoredisCluster } from '../redis/ioredis-port';
import type { RedisPort } from '../redis/port';
import { parseClusterNodes, parseRedisUrl, unparsableRedisUrl } from '../redis/redis-url';
import type { DeploymentConfig } from './define-config';
import { readSecrets, type SecretEnv } from './secrets';

/**
 * `redis.tcp.urlEnv` holds a URL, or for Cluster a comma-separated list of `host:port` or
 * URLs (src/redis/redis-url.ts: a password may hold `,`). A value that does not parse fails
 * naming the variable, never with its text.
 */
export function connectTcp(config: DeploymentConfig, env: SecretEnv): RedisPort {
  const tcp = config.data.redis.tcp;
  if (!tcp) throw new ConfigError('deployment config', [{ path: 'redis.tcp', message: 'is required to connect over TCP' }]);
  const value = readSecrets(env, [tcp.urlEnv], 'redis connection').get(tcp.urlEnv)!;
  return tcp.cluster ? connectCluster(value, tcp.urlEnv) : connectStandalone(value, tcp.urlEnv);
}

function connectStandalone(url: string, variable: string): RedisPort {
  // Checked first: ioredis takes any text for a host name (`not-a-url` → not-a-url:6379).
  parseRedisUrl(url, variable);
  try {
    return connectIoredis(url);
  } catch {
    // ioredis parses the URL as it is constructed (it connects later, asynchronously): what
    // it throws here is Node's URL error or a URIError, and the former carries the URL.
    throw unparsableRedisUrl(variable);
  }
}

function connectCluster(value: string, variable: string): RedisPort {
  const seeds = parseClusterNodes(value, variable);
  // Credentials (and TLS) given on the first node apply to every node of the Cluster.
  const redisOptions = {
    ...(seeds.username !== undefined ? { username: seeds.username } : {}),
    ...(seeds.password !== undefined ? { password: seeds.password } : {}),
    ...(seeds.tls ? { tls: {} } : {}),
  };
  return connectIoredisCluster([...seeds.nodes], { redisOptions });
}
