/**
 * SPEC §4's edge rows, end to end on every client, read back from Redis (PEL, DLT): a late
 * verdict is retain, a handler's wrong return value is retain, and a thrown value nothing
 * can inspect is retain and the run goes on.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPoller, type Poller } from '../../src/poller';
import { createProcessor, jsonPayload } from '../../src/processor';
import type { RedisPort } from '../../src/redis/port';
import type { HandlerOutcome } from '../../src/verdict';
import { clientKinds } from '../support/clients';
import { fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, dltRecords, pendingIds } from '../support/redis';
import { uninspectableValues } from '../support/thrown-values';

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
    expect(report).toMatchObject({ acked: 1, retained: 1, deadLettered: 0 });
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
});
