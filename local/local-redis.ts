/**
 * The local stack's Redis: the one REDIS_URL (or the config's `redis.tcp.urlEnv`) names,
 * otherwise a private redis-server on a free port — a 3-master Cluster when the config
 * says `cluster: true` — that `stop()` shuts down, and that is signalled anyway if the
 * process exits without stopping it (process-guards.ts).
 */
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { SecretEnv } from '../src/deployment/secrets';
import { hasRedisServer, REDIS_SERVER_INSTALL_HINT, startRedisCluster, startRedisServer } from './redis-server';
import { withoutCredentials } from '../src/redis/connection-failure';
import { splitNodeList } from '../src/redis/redis-url';
import { terminateOnExit } from './process-guards';
import { RespConnection } from './resp-connection';

export interface LocalRedis {
  /** The environment with the Redis variable set. */
  readonly env: SecretEnv;
  /** Where it is, without credentials (safe to print). */
  readonly display: string;
  /** True when this process started it (and stops it). */
  readonly private: boolean;
  /** Port of the private server (the first node of a private Cluster). */
  readonly port: number | undefined;
  stop(): Promise<void>;
}

/** Raised when no Redis is configured and redis-server is not installed. */
export class RedisServerMissingError extends Error {
  readonly code = 'REDIS_SERVER_MISSING';
  constructor(urlEnv: string) {
    super(`${urlEnv} is not set and redis-server is not installed. Install it with:\n  ${REDIS_SERVER_INSTALL_HINT}\nor point ${urlEnv} at a Redis you run.`);
    this.name = 'RedisServerMissingError';
  }
}

/**
 * host:port (list) of a Redis URL or of a Cluster's node list, without user or password (see
 * withoutCredentials). A standalone URL is one URL whatever commas its password holds; a
 * list is split as connectTcp splits it (splitNodeList).
 */
export function redactRedisUrl(value: string, { cluster }: { cluster: boolean }): string {
  return (cluster ? splitNodeList(value) : [value])
    .map((part) => {
      try {
        const url = new URL(withoutCredentials(part));
        return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
      } catch {
        return '(unparsable)';
      }
    })
    .join(',');
}

export async function startLocalRedis(config: DeploymentConfig, env: SecretEnv): Promise<LocalRedis> {
  const tcp = config.data.redis.tcp;
  if (!tcp) throw new Error(`the local stack needs a redis.tcp endpoint in ${config.name}'s config`);
  const given = env[tcp.urlEnv];
  if (given) return { env, display: redactRedisUrl(given, { cluster: tcp.cluster }), private: false, port: undefined, stop: async () => {} };
  if (!hasRedisServer()) throw new RedisServerMissingError(tcp.urlEnv);
  if (tcp.cluster) {
    const cluster = await startRedisCluster(3);
    const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    const pids = await Promise.all(cluster.nodes.map((node) => serverPid(node.port))).catch(async (error: unknown) => {
      await cluster.stop();
      throw error;
    });
    const release = terminateOnExit(pids);
    return { env: { ...env, [tcp.urlEnv]: nodes }, display: nodes, private: true, port: cluster.nodes[0]?.port, stop: guarded(cluster.stop, release) };
  }
  const server = await startRedisServer();
  const release = terminateOnExit([server.pid]);
  return { env: { ...env, [tcp.urlEnv]: server.url }, display: server.url, private: true, port: server.port, stop: guarded(server.stop, release) };
}

/** `stop`, then the exit guard released (a stopped server's pid may be reused). */
function guarded(stop: () => Promise<void>, release: () => void): () => Promise<void> {
  return async () => {
    await stop();
    release();
  };
}

/** The pid of the server on a loopback port, as it reports it (the Cluster's handle has no pids). */
async function serverPid(port: number): Promise<number> {
  const connection = new RespConnection(`redis://127.0.0.1:${port}`);
  try {
    const [info] = await connection.send([['INFO', 'server']]);
    const pid = /^process_id:(\d+)/m.exec(String(info))?.[1];
    if (pid === undefined) throw new Error(`redis-server on port ${port} reported no process_id`);
    return Number(pid);
  } finally {
    connection.close();
  }
}
