/**
 * Durability on request (SPEC §6.1), against a real primary with a replica started here, AOF
 * on, for every server binary on this machine: a publish (and a consumer's settle) waits for
 * WAIT / WAITAOF in its own round trip; a replica that does not answer (SIGSTOP) makes the
 * publish a transient failure (the append happened: a duplicate hint, and the retry within the
 * dedupe window answers `duplicate` once the replica is back) and the settle unconfirmed (the
 * ack stays). A server without WAITAOF (Redis 7.0) refuses WAITAOF-based options with a
 * ConfigError naming the option, before anything is written or claimed.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedisServer } from '../../local/redis-server';
import { createPoller } from '../../src/consume/poller';
import { errorCode } from '../../src/ground/errors';
import { createPublisher, type Publisher } from '../../src/publish/publisher';
import type { DurabilityInput } from '../../src/redis/durability';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { fastConfig, recordingProcessor } from '../support/poller';
import { pendingRows, uniquePrefix } from '../support/redis';
import { expectsWaitAof, labelOf, serverBinaries, startReplicated, type Replicated, type ServerBinary } from '../support/servers';

const binaries = serverBinaries();
const SETUP_TIMEOUT_MS = 30_000;

function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe.each(binaries.map((binary) => ({ binary, label: labelOf(binary) })))('durability on $label', ({ binary }: { binary: ServerBinary }) => {
  let set: Replicated;
  let primary: Redis;
  let replica: Redis;
  const ports: RedisPort[] = [];
  const connect = () => {
    const port = connectIoredis(set.primary.url);
    ports.push(port);
    return port;
  };
  const publisherWith = (stream: string, durability: DurabilityInput, port = connect()): Publisher =>
    createPublisher({ port, routes: { 'order.placed': stream }, auth: { mode: 'exclusive-stream', producer: 'shop' }, durability });
  const event = (eventId: string) => ({ eventType: 'order.placed', eventId, payload: `{"id":"${eventId}"}` });

  beforeAll(async () => {
    set = await startReplicated(binary, { appendonly: true });
    primary = new Redis(set.primary.url);
    replica = new Redis(set.replicas[0]!.url);
  }, SETUP_TIMEOUT_MS);
  afterEach(async () => {
    set.thaw(set.replicas[0]!);
    await Promise.all(ports.splice(0).map((port) => port.close()));
  });
  afterAll(async () => {
    primary?.disconnect();
    replica?.disconnect();
    await set?.stop();
  });

  describe('WAIT (replicas received it): every server has it', () => {
    it('a publish answers once the replica has the entry', async () => {
      const stream = `${uniquePrefix()}:orders`;
      const result = await publisherWith(stream, { replicas: 1 }).publish(event('e1'));
      // Read at once on the replica, no polling: WAIT returned only after it acknowledged.
      expect((await replica.xrange(stream, '-', '+')).map(([id]) => id)).toEqual([result.entryId]);
    });

    it('a replica that does not answer fails the publish as transient; the retry is a duplicate once it is back', async () => {
      const stream = `${uniquePrefix()}:orders`;
      const publisher = publisherWith(stream, { replicas: 1, timeoutMs: 200 });
      set.freeze(set.replicas[0]!);
      const error = await thrown(publisher.publish(event('e1')));
      expect(errorCode(error)).toBe('PUBLISH_APPEND_FAILED');
      expect(error).toMatchObject({ transient: true, message: expect.stringContaining('durability not confirmed: WAIT: replicas 0/1 within 200 ms') });
      expect(publisher.duplicateHints).toBe(1);
      // The append itself happened: the outbox's retry must not append it again.
      expect(await primary.xlen(stream)).toBe(1);
      set.thaw(set.replicas[0]!);
      const retried = await publisher.publish(event('e1'));
      expect(retried.duplicate).toBe(true);
      expect(await primary.xlen(stream)).toBe(1);
    });

    it('a duplicate answered on another connection still waits for the original append to reach the replica', async () => {
      const stream = `${uniquePrefix()}:orders`;
      await publisherWith(stream, { replicas: 1 }).publish(event('e1'));
      set.freeze(set.replicas[0]!);
      // A fresh connection has written nothing: without a write of its own in publish.lua's
      // duplicate path, its WAIT would count the frozen replica's old acknowledgement.
      await primary.set(`${stream}:unrelated`, 'x');
      const error = await thrown(publisherWith(stream, { replicas: 1, timeoutMs: 200 }).publish(event('e1')));
      expect(errorCode(error)).toBe('PUBLISH_APPEND_FAILED');
    });

    it('a settle waits too; one that falls short is acked all the same and counted unconfirmed', async () => {
      const stream = `${uniquePrefix()}:orders`;
      const publisher = publisherWith(stream, { replicas: 1 });
      await publisher.publishBatch([event('e1'), event('e2')]);
      const seen: string[] = [];
      const poller = createPoller({
        port: connect(),
        config: fastConfig(stream, { settleReserveMs: 1_000, durability: { replicas: 1, timeoutMs: 300 } }),
        process: recordingProcessor(seen),
      });
      const confirmed = await poller.run({ mode: 'drain' });
      expect(confirmed).toMatchObject({ acked: 2, settledUnconfirmed: 0 });

      await publisher.publishBatch([event('e3'), event('e4')]);
      set.freeze(set.replicas[0]!);
      const unconfirmed = await poller.run({ mode: 'drain' });
      expect(unconfirmed).toMatchObject({ acked: 2, settledUnconfirmed: 2 });
      // The acks happened: nothing is pending, nothing is redelivered.
      expect(await pendingRows(primary, stream, 'g')).toEqual([]);
      expect(seen).toEqual(['{"id":"e1"}', '{"id":"e2"}', '{"id":"e3"}', '{"id":"e4"}']);
    });
  });

  if (expectsWaitAof(binary)) {
    describe('WAITAOF (fsynced to the AOF of the primary and of replicas)', () => {
      it('a publish answers once the primary and the replica fsynced it', async () => {
        const stream = `${uniquePrefix()}:orders`;
        const publisher = publisherWith(stream, { primaryAof: true, replicaAof: 1 });
        await publisher.ready();
        const result = await publisher.publish(event('e1'));
        expect((await replica.xrange(stream, '-', '+')).map(([id]) => id)).toEqual([result.entryId]);
        expect(result.duplicate).toBe(false);
      });

      it('a replica that does not fsync fails the publish as transient, naming what fell short', async () => {
        const stream = `${uniquePrefix()}:orders`;
        const publisher = publisherWith(stream, { primaryAof: true, replicaAof: 1, timeoutMs: 300 });
        set.freeze(set.replicas[0]!);
        const error = await thrown(publisher.publish(event('e1')));
        expect(errorCode(error)).toBe('PUBLISH_APPEND_FAILED');
        expect((error as Error).message).toContain('replica AOFs 0/1 within 300 ms');
        expect(publisher.duplicateHints).toBe(1);
      });

      it('a settle waits for the replica AOF: the run reports once the replica holds the ack', async () => {
        const stream = `${uniquePrefix()}:orders`;
        await publisherWith(stream, { replicaAof: 1 }).publish(event('e1'));
        const poller = createPoller({
          port: connect(),
          config: fastConfig(stream, { settleReserveMs: 2_000, durability: { replicaAof: 1, timeoutMs: 1_500 } }),
          process: recordingProcessor([]),
        });
        expect(await poller.run({ mode: 'drain' })).toMatchObject({ acked: 1, settledUnconfirmed: 0 });
        expect(await pendingRows(replica, stream, 'g')).toEqual([]);

        await publisherWith(stream, { replicaAof: 1 }).publish(event('e2'));
        set.freeze(set.replicas[0]!);
        expect(await poller.run({ mode: 'drain' })).toMatchObject({ acked: 1, settledUnconfirmed: 1 });
        expect(await pendingRows(primary, stream, 'g')).toEqual([]);
      });

      it('refuses primaryAof on a server running without AOF, before writing', async () => {
        const plain = await startRedisServer({ binary: binary.path });
        const port = connectIoredis(plain.url);
        try {
          const publisher = publisherWith('orders', { primaryAof: true }, port);
          const error = await thrown(publisher.publish(event('e1')));
          expect(errorCode(error)).toBe('CONFIG_INVALID');
          expect(error).toMatchObject({ problems: [{ path: 'durability.primaryAof', message: expect.stringContaining('appendonly yes') }] });
          expect(await thrown(publisher.ready())).toMatchObject({ code: 'CONFIG_INVALID' });
          expect(publisher.duplicateHints).toBe(0);
          const plainAdmin = new Redis(plain.url);
          expect(await plainAdmin.exists('orders')).toBe(0);
          plainAdmin.disconnect();
        } finally {
          await port.close();
          await plain.stop();
        }
      });
    });
  } else {
    describe(`without WAITAOF (${labelOf(binary)})`, () => {
      it('refuses a WAITAOF-based publish with a ConfigError naming the option, writing nothing', async () => {
        const stream = `${uniquePrefix()}:orders`;
        const publisher = publisherWith(stream, { primaryAof: true, replicaAof: 1 });
        const error = await thrown(publisher.publish(event('e1')));
        expect(errorCode(error)).toBe('CONFIG_INVALID');
        expect(error).toMatchObject({
          problems: [{ path: 'durability.primaryAof', message: expect.stringContaining(`needs WAITAOF, which this server (${labelOf(binary)}) does not have`) }],
        });
        expect(await thrown(publisher.ready())).toMatchObject({ problems: [{ path: 'durability.primaryAof' }] });
        expect(publisher.duplicateHints).toBe(0);
        expect(await primary.exists(stream)).toBe(0);
        const replicaOnly = publisherWith(stream, { replicaAof: 1 });
        expect(await thrown(replicaOnly.publish(event('e1')))).toMatchObject({ problems: [{ path: 'durability.replicaAof' }] });
      });

      it('refuses a WAITAOF-based settle before the first claim: nothing is taken', async () => {
        const stream = `${uniquePrefix()}:orders`;
        await publisherWith(stream, { replicas: 1 }).publish(event('e1'));
        const seen: string[] = [];
        const poller = createPoller({
          port: connect(),
          config: fastConfig(stream, { settleReserveMs: 2_000, durability: { replicaAof: 1 } }),
          process: recordingProcessor(seen),
        });
        const error = await thrown(poller.run({ mode: 'drain' }));
        expect(error).toMatchObject({ code: 'CONFIG_INVALID', problems: [{ path: 'durability.replicaAof' }] });
        expect(seen).toEqual([]);
        expect(await primary.exists(stream)).toBe(1);
        expect(await primary.xinfo('GROUPS', stream)).toEqual([]);
      });
    });
  }
}, SETUP_TIMEOUT_MS);

// What this machine cannot show, said rather than passed over.
if (!binaries.some(expectsWaitAof)) {
  it.skip('WAITAOF durability: no server binary with WAITAOF here (Redis ≥ 7.2 or valkey-server; .ci/run installs Valkey)', () => {});
}
if (binaries.every(expectsWaitAof)) {
  it.skip('refusal of WAITAOF options: every server binary here has WAITAOF (a Redis 7.0 or 7.1 binary shows it)', () => {});
}

describe('durability when the server cannot be asked what it offers', () => {
  it('fails the publish as transient, before sending anything: no duplicate hint', { timeout: 10_000 }, async () => {
    const port = connectIoredis(`redis://127.0.0.1:${await freePort()}`, { connectTimeout: 200 });
    try {
      const publisher = createPublisher({
        port,
        routes: { 'order.placed': 'orders' },
        auth: { mode: 'exclusive-stream', producer: 'shop' },
        timeoutMs: 1_000,
        durability: { replicaAof: 1, timeoutMs: 300 },
      });
      const error = await thrown(publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'x' }));
      expect(error).toMatchObject({ code: 'PUBLISH_APPEND_FAILED', transient: true, message: expect.stringContaining('event e1 not sent (retry it)') });
      expect(publisher.duplicateHints).toBe(0);
    } finally {
      await port.close();
    }
  });
});
