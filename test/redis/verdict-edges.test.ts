/**
 * SPEC §4's edge rows, end to end on every client, read back from Redis (PEL, DLT): a late
 * verdict is retain, a handler's wrong return value is retain, a thrown value nothing can
 * inspect is retain and the run goes on, and a malformed entry or a payload that is not
 * UTF-8 is dead-lettered alone while the rest of its round is handled.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPoller, type Poller } from '../../src/consume/poller';
import { createProcessor, jsonPayload, textPayload } from '../../src/consume/processor';
import type { RedisPort } from '../../src/redis/port';
import { createCommandConsumer } from '../../src/saga/command-consumer';
import type { HandlerOutcome } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, dltRecords, pendingIds } from '../support/redis';
import { uninspectableValues } from '../support/thrown-values';
import { command, handSigned, ROUTE } from './saga-fixtures';
import { appendFields } from './stream-entries';

const orderSchema = z.object({ order: z.string() });
type Behaviour = (order: string) => Promise<HandlerOutcome> | HandlerOutcome;

/** Blocks the event loop, as a CPU-bound or synchronous-I/O handler does. */
const busyWait = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};

describe.each(clientKinds)('verdict edges over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let behaviour: Behaviour;
  let seen: string[];
  let poller: Poller;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');
  beforeEach(async () => {
    seen = [];
    behaviour = () => 'committed';
    poller = createPoller({
      port,
      config: fastConfig(stream, { handlerTimeoutMs: 100 }),
      process: createProcessor(jsonPayload(orderSchema), ({ payload }) => {
        seen.push(payload.order);
        return behaviour(payload.order);
      }),
    });
    await poller.ensureGroup();
  });

  const runOnce = () => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
  const order = (name: string) => append(admin, stream, { event: 'order.placed', event_id: `e-${name}`, payload: `{"order":"${name}"}` });

  it('retains an entry whose handler blocked the event loop past its timeout, then returned committed', async () => {
    behaviour = (name) => {
      if (name === 'slow') busyWait(300);
      return 'committed';
    };
    const slow = await order('slow');
    await order('quick');
    const report = await runOnce();
    expect(seen).toEqual(['slow', 'quick']);
    expect(report).toMatchObject({ acked: 1, retained: 1, deadLettered: 0 });
    expect(await pendingIds(admin, stream, 'g')).toEqual([slow]);
  });

  it.each([
    ['false', false],
    ["'retry'", 'retry'],
    ['null', null],
    ['an object', { ok: true }],
  ])('retains an entry whose handler returned %s (a programming error), never acking it', async (_, outcome) => {
    behaviour = (name) => (name === 'odd' ? (outcome as HandlerOutcome) : 'committed');
    const odd = await order('odd');
    await order('fine');
    const report = await runOnce();
    expect(report).toMatchObject({ acked: 1, retained: 1, handlerContractErrors: 1, deadLettered: 0 });
    expect(await pendingIds(admin, stream, 'g')).toEqual([odd]);
    expect(await admin.xlen(poller.config.keys.dlt)).toBe(0);
  });

  describe('a thrown value nothing can inspect', () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    beforeEach(() => {
      unhandled.length = 0;
      process.on('unhandledRejection', record);
    });
    afterEach(() => {
      process.off('unhandledRejection', record);
    });

    it.each(uninspectableValues())('retains the entry that threw %s; the run goes on', async (_, thrown) => {
      behaviour = (name) => {
        if (name === 'bad') throw thrown;
        return 'committed';
      };
      const bad = await order('bad');
      await order('after');
      const report = await runOnce();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen).toEqual(['bad', 'after']);
      expect(report).toMatchObject({ acked: 1, retained: 1, deadLettered: 0 });
      expect(await pendingIds(admin, stream, 'g')).toEqual([bad]);
      expect(unhandled).toEqual([]);
    });
  });

  it('dead-letters a JSON payload that is not UTF-8 as payload_undecodable, keeping its bytes, and handles the rest', async () => {
    // A JSON string holding 0xff: the lossy decoder would hand the handler "o\ufffd1".
    const bytes = Buffer.concat([Buffer.from('{"order":"o'), Buffer.from([0xff]), Buffer.from('1"}')]);
    const id = await append(admin, stream, { event: 'order.placed', event_id: 'e-bin', payload: bytes });
    await order('fine');
    const report = await runOnce();
    expect(seen).toEqual(['fine']);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, retained: 0 });
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    const [record] = await dltRecords(admin, poller.config.keys.dlt);
    expect(record).toMatchObject({ reason: 'payload_undecodable', source_entry_id: id, event_id: 'e-bin' });
    const [[, flat]] = (await admin.xrangeBuffer(poller.config.keys.dlt, '-', '+')) as [[Buffer, Buffer[]]];
    const index = flat.findIndex((field) => field.toString() === 'orig_payload');
    expect(flat[index + 1]).toEqual(bytes);
  });

  it('dead-letters a text payload that is not UTF-8, and hands well-formed text over unchanged', async () => {
    const texts: string[] = [];
    poller = createPoller({
      port,
      config: fastConfig(stream, { consumer: 'c-text' }),
      process: createProcessor(textPayload, ({ payload }) => {
        texts.push(payload);
      }),
    });
    await append(admin, stream, { event_id: 'e-bad', payload: Buffer.from([0x68, 0x69, 0xc3, 0x28]) });
    await append(admin, stream, { event_id: 'e-good', payload: 'naïve ☃' });
    const report = await runOnce();
    expect(texts).toEqual(['naïve ☃']);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1 });
    expect((await dltRecords(admin, poller.config.keys.dlt))[0]).toMatchObject({ reason: 'payload_undecodable', event_id: 'e-bad' });
  });

  it('dead-letters an entry that repeats a field name as entry_malformed, keeping every original field, and handles the rest', async () => {
    const id = await appendFields(admin, stream, [
      ['event_id', 'e-dup'],
      ['payload', '{"order":"first"}'],
      ['payload', '{"order":"second"}'],
    ]);
    await order('fine');
    const report = await runOnce();
    expect(seen).toEqual(['fine']);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, retained: 0 });
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    const [[, flat]] = (await admin.xrange(poller.config.keys.dlt, '-', '+')) as [[string, string[]]];
    expect(flat.slice(flat.indexOf('reason'), flat.indexOf('reason') + 2)).toEqual(['reason', 'entry_malformed']);
    expect(flat.filter((_, i) => flat[i - 1] === 'orig_payload')).toEqual(['{"order":"first"}', '{"order":"second"}']);
    expect((await dltRecords(admin, poller.config.keys.dlt))[0]).toMatchObject({ source_entry_id: id });
  });

  it('dead-letters a signed entry that repeats a field name as entry_malformed before its origin is checked', async () => {
    const key = 'orchestrator-signing-key-000001';
    const commands = createCommandConsumer({
      port,
      config: fastConfig(stream, { consumer: 'c-saga' }),
      auth: { mode: 'hmac', keyId: 'k1', key, producer: 'orchestrator' },
      route: ROUTE,
      handler: (delivery) => {
        seen.push(delivery.eventId);
      },
    });
    const signed = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), keyId: 'k1', key });
    // The signed fields, then the event_id again: the signature still matches the last value.
    await appendFields(admin, stream, [...signed, ['event_id', 'c1']]);
    const fine = await handSigned({ stream, eventId: 'c2', payload: JSON.stringify(command('c2')), keyId: 'k1', key });
    await appendFields(admin, stream, fine);
    const report = await commands.run({ mode: 'drain', deadline: Date.now() + 5_000 });
    expect(seen).toEqual(['c2']);
    expect(report).toMatchObject({ acked: 1, deadLettered: 1, authRejected: 0 });
    expect((await dltRecords(admin, commands.config.keys.dlt))[0]).toMatchObject({ reason: 'entry_malformed' });
  });
});
