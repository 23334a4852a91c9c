/**
 * The Redis servers a scenario runs against, all private, on free loopback ports (never
 * 6379), of the binary SAGA_REDIS_SERVER names (default redis-server): a plain server, a
 * restartable server with AOF `appendfsync always` (killed with SIGKILL and restarted on the
 * same port and directory), and a 3-master Cluster with one replica per master whose masters
 * can be failed over with `CLUSTER FAILOVER` on a replica.
 * Every process and folder is tracked (chaos/cleanup.ts) from the moment it exists, so an
 * exit in the middle of a start or a restart leaves nothing running.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, redisCliBinary, spawnRedisServer, waitUntil } from '../local/redis-server';
import { removeFolder, trackChild, trackFolder } from './cleanup';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function cli(port: number, ...args: string[]): string {
  const result = spawnSync(redisCliBinary(), ['-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
  return result.stdout ?? '';
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface Server {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child) return;
  child.kill('SIGKILL');
  await exited(child);
}

/** A standalone server without persistence. */
export async function startPlainRedis(): Promise<Server> {
  const port = await freePort();
  const dir = trackFolder(mkdtempSync(join(tmpdir(), 'saga-chaos-redis-')));
  const server = await spawnRedisServer(port, dir, ['--appendonly', 'no'], trackChild).catch((error: unknown) => {
    removeFolder(dir);
    throw error;
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await kill(server);
      removeFolder(dir);
    },
  };
}

export interface CrashableServer extends Server {
  /** SIGKILL: no shutdown, no final AOF rewrite; what was fsynced is what survives. */
  kill9(): Promise<void>;
  /** Starts it again on the same port and directory (replaying the AOF). */
  restart(): Promise<void>;
  readonly running: boolean;
}

/** A standalone server with AOF `appendfsync always`: every acknowledged write is on disk. */
export async function startCrashableRedis(): Promise<CrashableServer> {
  const port = await freePort();
  const dir = trackFolder(mkdtempSync(join(tmpdir(), 'saga-chaos-aof-')));
  const args = ['--appendonly', 'yes', '--appendfsync', 'always'];
  let child: ChildProcess | undefined;
  let stopped = false;
  // The process of a start still waiting for its PING: stop() must not miss it.
  let starting: ChildProcess | undefined;
  const start = async () => {
    try {
      child = await spawnRedisServer(port, dir, args, (spawned) => {
        starting = trackChild(spawned);
      });
    } finally {
      starting = undefined;
    }
    if (stopped) {
      // stop() ran while this start waited for its PING
      const late = child;
      child = undefined;
      await kill(late);
    }
  };
  try {
    await start();
  } catch (error) {
    removeFolder(dir);
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    async kill9() {
      const dying = child;
      child = undefined;
      await kill(dying);
    },
    async restart() {
      if (child || stopped) return;
      // The port may linger for a moment after SIGKILL; retry until it binds.
      for (let attempt = 0; ; attempt += 1) {
        try {
          await start();
          return;
        } catch (error) {
          if (attempt >= 20 || stopped) throw error;
          await sleep(100);
        }
      }
    },
    async stop() {
      stopped = true;
      const last = child;
      child = undefined;
      await Promise.all([kill(last), kill(starting)]);
      removeFolder(dir);
    },
  };
}

export interface ReplicatedCluster {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** Fails the master owning `key`'s slot over to its replica; resolves with the new master's port. */
  failover(key: string): Promise<number>;
  stop(): Promise<void>;
}

interface NodeLine {
  id: string;
  port: number;
  master: boolean;
  masterId: string;
  slots: string[];
}

function clusterNodes(port: number): NodeLine[] {
  return cli(port, 'cluster', 'nodes')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parts = line.split(' ');
      return {
        id: parts[0]!,
        port: Number(parts[1]!.split('@')[0]!.split(':')[1]),
        master: parts[2]!.includes('master'),
        masterId: parts[3]!,
        slots: parts.slice(8),
      };
    });
}

function replicaInSync(port: number): boolean {
  const info = cli(port, 'info', 'replication');
  return info.includes('role:slave') && info.includes('master_link_status:up') && info.includes('master_sync_in_progress:0');
}

function ownsSlot(node: NodeLine, slot: number): boolean {
  return node.slots.some((range) => {
    const [from, to = from] = range.split('-').map(Number);
    return slot >= from! && slot <= to!;
  });
}

export async function startReplicatedCluster(masters = 3): Promise<ReplicatedCluster> {
  const dir = trackFolder(mkdtempSync(join(tmpdir(), 'saga-chaos-cluster-')));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(kill));
    removeFolder(dir);
  };
  try {
    for (let i = 0; i < masters * 2; i += 1) {
      const port = await freePort(true);
      ports.push(port);
      await spawnRedisServer(port, dir, ['--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'], (child) => {
        children.push(trackChild(child));
      });
    }
    const created = spawnSync(redisCliBinary(), ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (created.status !== 0) throw new Error(`${redisCliBinary()} --cluster create failed: ${created.stderr || created.stdout}`);
    await waitUntil(
      () => ports.every((p) => cli(p, 'cluster', 'info').includes('cluster_state:ok')) && clusterNodes(ports[0]!).filter((n) => !n.master).length === masters,
      'cluster state ok with replicas',
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    async failover(key) {
      const slot = Number(cli(ports[0]!, 'cluster', 'keyslot', key).trim());
      const nodes = clusterNodes(ports[0]!);
      const master = nodes.find((n) => n.master && ownsSlot(n, slot));
      const replica = master && nodes.find((n) => !n.master && n.masterId === master.id);
      if (!master || !replica) throw new Error(`no replica found for slot ${slot}`);
      // A replica still loading its first full sync holds no (or old) data: promoting it
      // would be Redis losing the stream, not the product. Fail over only a synced replica.
      await waitUntil(() => replicaInSync(replica.port), `replica ${replica.port} in sync`, 30_000);
      const reply = cli(replica.port, 'cluster', 'failover').trim();
      if (reply !== 'OK') throw new Error(`CLUSTER FAILOVER on ${replica.port} answered ${reply}`);
      await waitUntil(() => clusterNodes(replica.port).some((n) => n.port === replica.port && n.master), `failover to ${replica.port}`, 20_000);
      // The old master resyncs as a replica in the background; the next failover of this
      // slot promotes it, and waits for it to be in sync first (above).
      return replica.port;
    },
    stop,
  };
}
