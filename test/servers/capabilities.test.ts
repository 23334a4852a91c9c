/**
 * The server the suites run against is the binary SAGA_REDIS_SERVER names (so a
 * `test:servers` pass tests what it says), and the capabilities module learns of it what the
 * server really does — checked against the binary's `--version`, a WAITAOF sent by hand and
 * the fields XINFO CONSUMERS really answers — once per port.
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { redisServerBinary, serverBinaryVersion } from '../../local/redis-server';
import { serverCapabilities } from '../../src/redis/capabilities';
import { meterPort } from '../../src/redis/metered';
import { clientKinds } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';

const binary = serverBinaryVersion(redisServerBinary());
const ownServers = process.env.REDIS_URL === undefined && process.env.REDIS_CLUSTER_NODES === undefined;

/** family and version from INFO server, read by hand. */
function identity(info: string): string {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const valkey = field('valkey_version');
  return valkey === undefined ? `redis ${field('redis_version')}` : `valkey ${valkey}`;
}

describe(`the suites' servers`, () => {
  if (!ownServers) {
    it.skip('are yours (REDIS_URL / REDIS_CLUSTER_NODES given): which binary runs them is not checked', () => {});
    return;
  }
  it(`are ${binary?.family} ${binary?.version}, the binary SAGA_REDIS_SERVER names (${redisServerBinary()})`, async () => {
    expect(binary).toBeDefined();
    const admin = adminClient();
    const cluster = new Cluster(inject('clusterNodes'));
    try {
      expect(identity(await admin.info('server'))).toBe(`${binary!.family} ${binary!.version}`);
      await cluster.ping();
      const masters = cluster.nodes('master');
      expect(masters).toHaveLength(3);
      for (const node of masters) expect(identity(await node.info('server'))).toBe(`${binary!.family} ${binary!.version}`);
    } finally {
      admin.disconnect();
      cluster.disconnect();
    }
  });
});

describe.each(clientKinds)('server capabilities over $name', (kind) => {
  let admin: Redis;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => admin.disconnect());

  /** What the server really does: WAITAOF known or not, `inactive` in XINFO CONSUMERS or not. */
  async function observed(): Promise<{ waitAof: boolean; xinfoInactive: boolean }> {
    const waitAof = await admin.call('WAITAOF', '0', '0', '0').then(
      () => true,
      (error: Error) => (/unknown command/i.test(error.message) ? false : true),
    );
    const stream = `${uniquePrefix()}:caps`;
    await admin.xgroup('CREATE', stream, 'g', '$', 'MKSTREAM');
    await admin.xgroup('CREATECONSUMER', stream, 'g', 'c');
    const [consumer] = (await admin.xinfo('CONSUMERS', stream, 'g')) as unknown[][];
    await admin.del(stream);
    return { waitAof, xinfoInactive: consumer!.includes('inactive') };
  }

  it('learns family, version and what the server offers', async () => {
    const port = kind.connect();
    try {
      const caps = await serverCapabilities(port);
      if (binary && ownServers) expect({ family: caps.family, version: caps.version }).toEqual({ family: binary.family, version: binary.version });
      expect({ waitAof: caps.waitAof, xinfoInactive: caps.xinfoInactive }).toEqual(await observed());
      const aof = /aof_enabled:(\d)/.exec(await admin.info('persistence'))?.[1];
      expect(caps.aofEnabled).toBe(aof === '1');
    } finally {
      await port.close();
    }
  });

  it('asks once per port: one round trip, then the cached answer', async () => {
    const port = meterPort(kind.connect());
    try {
      const first = await serverCapabilities(port);
      expect(await serverCapabilities(port)).toBe(first);
      expect(port.roundTrips).toBe(1);
    } finally {
      await port.close();
    }
  });
});
