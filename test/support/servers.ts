/**
 * Server binaries for the suites that start their own servers (durability: a primary with a
 * replica), and what the tests expect of each — read from the binary's `--version`, never
 * from the capabilities module under test.
 *
 * The binaries: the one the run uses (SAGA_REDIS_SERVER, default redis-server) and every other
 * found on this machine (redis-server, valkey-server on PATH, /usr/bin, /usr/local/bin), so
 * one `npm test` covers a server with WAITAOF and one without when the machine has both.
 */
import { Redis } from 'ioredis';
import { findServerBinaries, redisServerBinary, startRedisServer, waitUntil, type RedisProcess, type ServerBinary } from '../../local/redis-server';
import { killOnExit } from './exit-guard';

export type { ServerBinary };

/** Every server binary on the machine, the run's own first. */
export function serverBinaries(): ServerBinary[] {
  return findServerBinaries([redisServerBinary()]);
}

/** WAITAOF came with Redis 7.2; every Valkey has it (it forked from 7.2.4). */
export function expectsWaitAof(binary: ServerBinary): boolean {
  if (binary.family === 'valkey') return true;
  const [major = 0, minor = 0] = binary.version.split('.').map(Number);
  return major > 7 || (major === 7 && minor >= 2);
}

export function labelOf(binary: ServerBinary): string {
  return `${binary.family} ${binary.version}`;
}

export interface Replicated {
  readonly primary: RedisProcess;
  readonly replicas: readonly RedisProcess[];
  /** SIGSTOP: the primary still counts it connected, and it acknowledges nothing. */
  freeze(replica: RedisProcess): void;
  thaw(replica: RedisProcess): void;
  stop(): Promise<void>;
}

/**
 * A primary and `count` replicas of `binary`, each with AOF on when `appendonly` (fsync every
 * second, as production servers run), started once the replicas are in sync.
 */
export async function startReplicated(binary: ServerBinary, options: { count?: number; appendonly: boolean }): Promise<Replicated> {
  const started: RedisProcess[] = [];
  const unguards: Array<() => void> = [];
  const frozen = new Set<number>();
  const start = async (replicaOf?: number) => {
    const server = await startRedisServer({ binary: binary.path, appendonly: options.appendonly, replicaOf });
    started.push(server);
    unguards.push(killOnExit(server.pid));
    return server;
  };
  const stop = async () => {
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
    await Promise.all(started.map((server) => server.stop()));
    unguards.forEach((unguard) => unguard());
  };
  try {
    const primary = await start();
    const replicas: RedisProcess[] = [];
    for (let i = 0; i < (options.count ?? 1); i += 1) replicas.push(await start(primary.port));
    await waitUntil(() => inSync(primary, replicas.length), `${replicas.length} replica(s) of ${labelOf(binary)} in sync`, 20_000);
    return {
      primary,
      replicas,
      freeze(replica) {
        process.kill(replica.pid, 'SIGSTOP');
        frozen.add(replica.pid);
      },
      thaw(replica) {
        process.kill(replica.pid, 'SIGCONT');
        frozen.delete(replica.pid);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The primary sees `count` replicas online with its whole replication stream. */
async function inSync(primary: RedisProcess, count: number): Promise<boolean> {
  const client = new Redis(primary.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await client.connect();
    const info = await client.info('replication');
    const offset = /master_repl_offset:(\d+)/.exec(info)?.[1];
    const online = [...info.matchAll(/^slave\d+:.*state=online,offset=(\d+)/gm)].filter((m) => m[1] === offset);
    return online.length === count;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
