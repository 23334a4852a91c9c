/**
 * Vitest global setup: private redis-server processes on free ports for the whole run
 * (a standalone server and a 3-master Cluster), and an Upstash-protocol REST server in
 * front of the standalone one, so every suite also runs over @upstash/redis. `REDIS_URL`
 * points the standalone suites at your own server instead; `REDIS_CLUSTER_NODES`
 * (host:port,...) does the same for Cluster.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { startRedisCluster, startRedisServer } from '../../local/redis-server';
import { startRestServer } from '../../local/rest-emulator';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    clusterNodes: Array<{ host: string; port: number }>;
    /** Upstash REST endpoint forwarding to `redisUrl`, and its bearer token (random per run). */
    restUrl: string;
    restToken: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    const server = await startRedisServer();
    stops.push(server.stop);
    redisUrl = server.url;
  }
  let clusterNodes = process.env.REDIS_CLUSTER_NODES?.split(',').map((hostPort) => {
    const [host = '127.0.0.1', port = '0'] = hostPort.split(':');
    return { host, port: Number(port) };
  });
  if (!clusterNodes) {
    const cluster = await startRedisCluster(3);
    stops.push(cluster.stop);
    clusterNodes = [...cluster.nodes];
  }
  const restToken = randomBytes(24).toString('hex');
  const rest = await startRestServer({ redisUrl, token: restToken });
  stops.push(rest.close);
  project.provide('redisUrl', redisUrl);
  project.provide('restUrl', rest.url);
  project.provide('restToken', restToken);
  project.provide('clusterNodes', clusterNodes);
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}
