/**
 * Redis Cluster (3 masters, private): a full round with hash-tagged names, and configs
 * whose keys would span slots rejected before any command is sent.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/ground/errors';
import { markerKeyFor } from '../../src/entry/marker-key';
import { checkReadiness } from '../../src/probes/readiness';
import { createPoller } from '../../src/consume/poller';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { Deferral, Rejection } from '../../src/verdict/verdict';
import { fastConfig, recordingProcessor } from '../support/poller';
import { uniquePrefix } from '../support/redis';
import { useClusterPerSuite } from '../support/redis-suite';

describe('redis cluster (ioredis)', () => {
  let admin: Cluster;
  let port: RedisPort;
  useClusterPerSuite((h) => ({ admin, port } = h));

  it('runs a round with hash-tagged keys: acks, dead-letters and stores the cursor on one slot', async () => {
    const stream = `orders:{${uniquePrefix()}}`;
    const poller = createPoller({
      port,
      config: fastConfig(stream, { keyTag: stream.slice(8, -1) }),
      process: recordingProcessor([], (payload) => (payload === 'bad' ? Promise.reject(new Rejection('poison')) : 'committed')),
    });
    expect(await poller.ensureGroup()).toBe('created');
    await admin.xadd(stream, '*', 'event_id', 'e1', 'payload', 'good');
    const bad = (await admin.xadd(stream, '*', 'event_id', 'e2', 'payload', 'bad'))!;
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, retained: 0 });
    expect(await admin.xpending(stream, 'g')).toEqual([0, null, null, null]);
    expect(await admin.xlen(poller.config.keys.dlt)).toBe(1);
    expect(await admin.exists(markerKeyFor(poller.config.keys, 'g', bad))).toBe(1);
    expect(await admin.get(poller.config.keys.cursor)).toBe('0-0');
  });

  it('defers with a delay and pages the PEL by backoff with the deferral hash on the stream slot', async () => {
    const stream = `orders:{${uniquePrefix()}}`;
    const poller = createPoller({
      port,
      config: fastConfig(stream, { keyTag: stream.slice(8, -1) }),
      process: recordingProcessor([], () => Promise.reject(new Deferral('rate limited', { retryAfterMs: 60_000 }))),
    });
    await poller.ensureGroup();
    const id = (await admin.xadd(stream, '*', 'event_id', 'e1', 'payload', 'p'))!;
    expect(await poller.run({ mode: 'drain' })).toMatchObject({ retained: 1 });
    expect(poller.config.keys.defer).toBe(`${stream}:defer:g`);
    const notBefore = Number(await admin.hget(poller.config.keys.defer, id));
    // Past minIdle and the first backoff, not past the deferral: the claim leaves it and says until when.
    await admin.xclaim(stream, 'g', 'c1', 0, id, 'IDLE', 30_000, 'JUSTID');
    const report = await poller.run({ mode: 'drain' });
    expect(report).toMatchObject({ reclaimed: 0, nextDueAt: notBefore });
    expect(await admin.get(poller.config.keys.cursor)).toBe('0-0');
  });

  it('reports not ready, rather than ready, for a config that cannot run on the Cluster', async () => {
    const tagged = `orders:{${uniquePrefix()}}`;
    const readiness = await checkReadiness({ port, consumers: [fastConfig('orders-untagged'), fastConfig(tagged)] });
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.filter((c) => !c.ok).map((c) => [c.check, c.subject, c.code])).toEqual([['config', 'consumers[0]', 'CONFIG_INVALID']]);
    expect(readiness.checks.find((c) => c.check === 'group')).toMatchObject({ subject: `${tagged}/g`, ok: true });
  });

  it('rejects, before any command, a config whose names span two hash tags', () => {
    const metered = meterPort(port);
    const build = (overrides: object) =>
      createPoller({ port: metered, config: fastConfig('orders:{a}', overrides), process: recordingProcessor([]) });
    expect(() => build({ keyTag: 'a', keys: { dlt: 'orders:{b}:dlt' } })).toThrow(ConfigError);
    expect(() => build({ keys: { cursor: 'cursor:{b}' } })).toThrow(/keys\.cursor/);
    expect(() => build({ keys: { defer: 'defer:{b}' } })).toThrow(/keys\.defer/);
    expect(() =>
      createPoller({ port: metered, config: fastConfig('orders-untagged'), process: recordingProcessor([]) }),
    ).toThrow(/stream: needs a hash tag/);
    expect(metered.roundTrips).toBe(0);
  });
});
