/**
 * Redis Cluster (3 masters, private): retention, redrive and the backlog probe on a
 * hash-tagged stream. A script touching a key it did not declare, or keys on two slots,
 * fails here (CROSSSLOT), so this checks every KEYS list. Cluster is a TCP-only setup.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { createPoller } from '../../src/consume/poller';
import { probeBacklog } from '../../src/probes/backlog';
import type { RedisPort } from '../../src/redis/port';
import { createRedriver } from '../../src/redrive/redrive';
import { parseRetentionConfig } from '../../src/retention/config';
import { runRetention } from '../../src/retention/run';
import { Rejection } from '../../src/verdict/verdict';
import { fastConfig, recordingProcessor } from '../support/poller';
import { uniquePrefix } from '../support/redis';
import { useClusterPerSuite } from '../support/redis-suite';

describe('retention and redrive on redis cluster (ioredis)', () => {
  let admin: Cluster;
  let port: RedisPort;
  useClusterPerSuite((h) => ({ admin, port } = h));

  it('dead-letters, redrives, probes and trims a hash-tagged stream', async () => {
    const tag = uniquePrefix();
    const stream = `orders:{${tag}}`;
    let fail = true;
    const poller = createPoller({
      port,
      config: fastConfig(stream, { keyTag: tag }),
      process: recordingProcessor([], () => (fail ? Promise.reject(new Rejection('poison')) : 'committed')),
    });
    await poller.ensureGroup();
    await admin.xadd(stream, '*', 'event_id', 'e1', 'payload', 'p');
    expect((await poller.run({ mode: 'drain' })).deadLettered).toBe(1);

    const redriver = createRedriver({ port, config: poller.config });
    const [record] = (await redriver.list()).records;
    expect((await redriver.redrive([record!.id]))[0]!.status).toBe('redriven');
    expect(await admin.exists(`${stream}:dlt:marker:e1`)).toBe(0);
    fail = false;
    expect((await poller.run({ mode: 'drain' })).acked).toBe(1);

    expect(await probeBacklog(port, { stream, group: 'g' })).toMatchObject({ pending: 0, consumers: 1, lag: 0, streamLength: 2, deadLetters: 0 });

    const report = await runRetention(port, parseRetentionConfig({ stream, keyTag: tag, dltRetentionSeconds: 7 * 24 * 3600 }));
    expect(report.stream).toMatchObject({ removed: 1, status: 'trimmed' });
    expect(await admin.xlen(stream)).toBe(1);
  });

  it('refuses to build a redriver whose keys would span slots', () => {
    const config = parseConsumerConfig(fastConfig(`orders-${uniquePrefix()}`));
    expect(() => createRedriver({ port, config })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
