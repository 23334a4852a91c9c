/**
 * The Redis clients every integration suite runs against. A suite written with
 * `describe.each(clientKinds)` runs once per client; adding a client here adds it to all
 * of them (one suite, parametrized — never a copy).
 */
import { inject } from 'vitest';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { connectUpstash } from '../../src/redis/upstash-port';

export interface ClientKind {
  readonly name: string;
  /** A fresh port (and connection) for the private standalone test server. */
  connect(): RedisPort;
}

export const ioredisKind: ClientKind = {
  name: 'ioredis',
  connect: () => connectIoredis(inject('redisUrl')),
};

/** @upstash/redis over HTTP, through the test REST server in front of the same Redis. */
export const upstashKind: ClientKind = {
  name: 'upstash',
  connect: () => connectUpstash({ url: inject('restUrl'), token: inject('restToken') }),
};

export const clientKinds: ClientKind[] = [ioredisKind, upstashKind];
