/**
 * The hooks most integration suites share: one admin client per suite, and per test a fresh
 * port of the client under test plus a unique stream name. `bind` hands them to the suite's
 * own variables.
 */
import { Cluster, Redis as IORedis, type Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { startRedisServer, type RedisProcess } from '../../local/redis-server';
import { connectIoredisCluster } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import type { ClientKind } from './clients';
import { adminClient, uniquePrefix } from './redis';

export interface RedisHandles {
  readonly admin: Redis;
  readonly port: RedisPort;
  readonly stream: string;
}

export function useRedisPerTest(kind: ClientKind, bind: (handles: RedisHandles) => void, streamSuffix = 's'): void {
  let admin: Redis;
  let port: RedisPort | undefined;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => {
    admin.disconnect();
  });
  beforeEach(() => {
    port = kind.connect();
    bind({ admin, port, stream: `${uniquePrefix()}:${streamSuffix}` });
  });
  afterEach(async () => {
    await port?.close();
  });
}

export interface PrivateRedisHandles {
  readonly server: RedisProcess;
  readonly admin: Redis;
}

/**
 * A redis-server of the suite's own, with an admin client, for suites that change server-wide
 * state (SCRIPT FLUSH, maxmemory) or read server-wide counters (INFO commandstats counts every
 * client's calls, and the shared server serves other files at the same time).
 */
export function usePrivateRedis(bind: (handles: PrivateRedisHandles) => void): void {
  let server: RedisProcess | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new IORedis(server.url);
    bind({ server, admin });
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
}

export interface ClusterHandles {
  readonly admin: Cluster;
  readonly port: RedisPort;
}

/** One admin client and one port on the private 3-master Cluster for the whole suite. */
export function useClusterPerSuite(bind: (handles: ClusterHandles) => void): void {
  let handles: ClusterHandles | undefined;
  beforeAll(() => {
    handles = { admin: new Cluster(inject('clusterNodes')), port: connectIoredisCluster(inject('clusterNodes')) };
    bind(handles);
  });
  afterAll(async () => {
    await handles?.port.close();
    handles?.admin.disconnect();
  });
}
