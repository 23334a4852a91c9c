/**
 * Vitest global setup of the Redis-facing projects: private redis-server processes on free
 * ports (a standalone server and a 3-master Cluster), and an Upstash-protocol REST server in
 * front of the standalone one, so every suite also runs over @upstash/redis.
 * `SAGA_REDIS_SERVER` picks the binary they run (e.g. /usr/bin/valkey-server; default
 * redis-server; `npm run test:servers` runs the suites once per binary found). `REDIS_URL`
 * points the standalone suites at your own server instead; `REDIS_CLUSTER_NODES`
 * (host:port,...) does the same for Cluster. Several projects share one set per run
 * (shared-service.ts); the last to finish stops them, failed tests included, and an
 * interrupted run kills them on exit (exit-guard.ts).
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { redisServerProcessName, startRedisCluster, startRedisServer } from '../../local/redis-server';
import { startRestServer } from '../../local/rest-emulator';
import { childPidsNamed, killOnExit } from './exit-guard';
import { acquire, type Service } from './shared-service';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    clusterNodes: Array<{ host: string; port: number }>;
    /** Upstash REST endpoint forwarding to `redisUrl`, and its bearer token (random per run). */
    restUrl: string;
    restToken: string;
  }
}

type ClusterNodes = Array<{ host: string; port: number }>;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const releases: Array<() => Promise<void>> = [];
  const teardown = async () => {
    for (const release of releases.reverse()) await release();
  };
  const use = async <T>(name: string, start: () => Promise<Service<T>>): Promise<T> => {
    const { value, release } = await acquire(name, start);
    releases.push(release);
    return value;
  };
  try {
    const redisUrl = process.env.REDIS_URL ?? (await use('redis-standalone', startStandalone));
    const clusterNodes = givenClusterNodes() ?? (await use('redis-cluster', startCluster));
    const rest = await use(`rest-server ${redisUrl}`, () => startRest(redisUrl));
    project.provide('redisUrl', redisUrl);
    project.provide('restUrl', rest.url);
    project.provide('restToken', rest.token);
    project.provide('clusterNodes', clusterNodes);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

function givenClusterNodes(): ClusterNodes | undefined {
  return process.env.REDIS_CLUSTER_NODES?.split(',').map((hostPort) => {
    const [host = '127.0.0.1', port = '0'] = hostPort.split(':');
    return { host, port: Number(port) };
  });
}

async function startStandalone(): Promise<Service<string>> {
  const server = await startRedisServer();
  const unguard = killOnExit(server.pid);
  return { value: server.url, stop: async () => (await server.stop(), unguard()) };
}

async function startCluster(): Promise<Service<ClusterNodes>> {
  const name = redisServerProcessName();
  const before = new Set(childPidsNamed(name));
  const cluster = await startRedisCluster(3);
  // The Cluster's handle has no pids: its nodes are the server children it just added.
  const unguards = childPidsNamed(name)
    .filter((pid) => !before.has(pid))
    .map((pid) => killOnExit(pid));
  return { value: [...cluster.nodes], stop: async () => (await cluster.stop(), unguards.forEach((unguard) => unguard())) };
}

async function startRest(redisUrl: string): Promise<Service<{ url: string; token: string }>> {
  const token = randomBytes(24).toString('hex');
  const rest = await startRestServer({ redisUrl, token });
  return { value: { url: rest.url, token }, stop: rest.close };
}
