/** Bounded concurrency, ordering keys, timeouts and the deadline — pure logic, real timers. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideAll, runOrdered, type EntryProcessor } from '../../src/consume/decide';
import type { StreamEntry } from '../../src/entry/entry';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { Rejection, Verdicts } from '../../src/verdict/verdict';
import { uninspectableValues } from '../support/thrown-values';
import { decideOptions } from '../support/poller';

const entry = (id: string, key?: string): StreamEntry => ({
  id,
  fields: new Map(key ? [['key', new TextEncoder().encode(key)]] : []),
  deliveries: 1,
  reclaimed: false,
});
/** The entry's fields plus the two createProcessor requires. */
const withPayload = (e: StreamEntry) =>
  new Map([...e.fields, ['event_id', new TextEncoder().encode(`ev-${e.id}`)], ['payload', new TextEncoder().encode('{}')]]);
const keyOf = (e: StreamEntry) => (e.fields.has('key') ? new TextDecoder().decode(e.fields.get('key')) : undefined);
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Blocks the event loop: no timer can fire until it returns. */
const busyWait = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};

describe('runOrdered', () => {
  it('runs in index order with limit 1', async () => {
    const order: number[] = [];
    await runOrdered(4, 1, undefined, () => 0, async (i) => {
      await tick(3 - i);
      order.push(i);
    });
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('never exceeds the limit and keeps one key sequential, in order', async () => {
    const items = ['a', 'b', 'a', 'c', 'a', 'b'];
    let running = 0;
    let peak = 0;
    const activeKeys = new Set<string>();
    const finished: number[] = [];
    await runOrdered(items.length, 3, items, () => 0, async (i) => {
      const key = items[i]!;
      expect(activeKeys.has(key)).toBe(false);
      activeKeys.add(key);
      running += 1;
      peak = Math.max(peak, running);
      await tick(5);
      running -= 1;
      activeKeys.delete(key);
      finished.push(i);
    });
    expect(peak).toBe(3);
    expect(finished.filter((i) => items[i] === 'a')).toEqual([0, 2, 4]);
    expect(finished.filter((i) => items[i] === 'b')).toEqual([1, 5]);
  });

  it('starts nothing more once mayStart says no', async () => {
    const started: number[] = [];
    await runOrdered(3, 1, undefined, () => (started.length < 2 ? 0 : undefined), async (i) => {
      started.push(i);
    });
    expect(started).toEqual([0, 1]);
  });
});

describe('decideAll', () => {
  const options = decideOptions;

  it('retains an entry whose handler outlives its timeout, and aborts its signal', async () => {
    let aborted = false;
    const process: EntryProcessor = (_, ctx) =>
      new Promise(() => {
        ctx.signal.addEventListener('abort', () => {
          aborted = true;
        });
      });
    const result = await decideAll([entry('1-0')], process, options({ handlerTimeoutMs: 20 }));
    expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('handler_timeout'));
    expect(aborted).toBe(true);
    expect(result.stoppedForDeadline).toBe(false);
  });

  it('classifies a processor that throws synchronously as transient', async () => {
    const process: EntryProcessor = () => {
      throw new Error('boom');
    };
    const result = await decideAll([entry('1-0')], process, options());
    expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('handler_error'));
  });

  it('cuts a handler at the deadline, not at its own longer timeout', async () => {
    const process: EntryProcessor = () => new Promise(() => {});
    const result = await decideAll([entry('1-0'), entry('2-0')], process, options({ deadline: Date.now() + 60 }));
    expect(result.decisions.map((d) => d.verdict)).toEqual([Verdicts.retain('deadline'), Verdicts.retain('deadline')]);
    expect(result.handled).toBe(1);
    expect(result.stoppedForDeadline).toBe(true);
  });

  it.each([1, 4])('keeps later entries of a key pending once an earlier one was retained (concurrency %i)', async (concurrency) => {
    const handledIds: string[] = [];
    const process: EntryProcessor = async (e) => {
      handledIds.push(e.id);
      if (e.id === '1-0') throw new Error('transient');
      return Verdicts.ack();
    };
    const entries = [entry('1-0', 'x'), entry('2-0', 'y'), entry('3-0', 'x'), entry('4-0', 'y')];
    const result = await decideAll(entries, process, options({ concurrency, keys: entries.map(keyOf) }));
    expect(result.decisions.map((d) => d.verdict)).toEqual([
      Verdicts.retain('handler_error'),
      Verdicts.ack(),
      Verdicts.retain('ordering'),
      Verdicts.ack(),
    ]);
    expect(handledIds.sort()).toEqual(['1-0', '2-0', '4-0']);
  });

  it('handles entries of different keys concurrently but one key in order', async () => {
    const log: string[] = [];
    const process: EntryProcessor = async (e) => {
      log.push(`start ${e.id}`);
      await tick(10);
      log.push(`end ${e.id}`);
      return Verdicts.ack();
    };
    const entries = [entry('1-0', 'x'), entry('2-0', 'y'), entry('3-0', 'x')];
    await decideAll(entries, process, options({ concurrency: 4, keys: entries.map(keyOf) }));
    expect(log.slice(0, 2).sort()).toEqual(['start 1-0', 'start 2-0']);
    expect(log.indexOf('start 3-0')).toBeGreaterThan(log.indexOf('end 1-0'));
  });

  describe('a verdict reached after the time limit is retain, whatever it says', () => {
    const late = (outcome: () => Promise<never> | Promise<ReturnType<typeof Verdicts.ack>>, blockMs: number): EntryProcessor => async () => {
      busyWait(blockMs);
      return outcome();
    };

    it('retains an ack that arrives after the handler timeout because the handler blocked the event loop', async () => {
      const result = await decideAll([entry('1-0')], late(async () => Verdicts.ack(), 80), options({ handlerTimeoutMs: 20 }));
      expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('handler_timeout'));
    });

    it('retains a late Rejection too: a late verdict proves nothing', async () => {
      const result = await decideAll([entry('1-0')], late(() => Promise.reject(new Rejection('order_unknown')), 80), options({ handlerTimeoutMs: 20 }));
      expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('handler_timeout'));
    });

    it('retains a handler that blocks synchronously past its timeout through createProcessor', async () => {
      const process = createProcessor(rawPayload, () => {
        busyWait(80);
        return 'committed';
      });
      const result = await decideAll([entry('1-0', 'k')], (e, ctx) => process({ ...e, fields: withPayload(e) }, ctx), options({ handlerTimeoutMs: 20 }));
      expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('handler_timeout'));
    });

    it('retains an ack that arrives after the run deadline, as deadline', async () => {
      const result = await decideAll([entry('1-0')], late(async () => Verdicts.ack(), 120), options({ deadline: Date.now() + 80 }));
      expect(result.decisions[0]!.verdict).toEqual(Verdicts.retain('deadline'));
      expect(result.stoppedForDeadline).toBe(true);
    });

    it('judges each entry by its own limit with concurrency > 1', async () => {
      const process: EntryProcessor = async (e) => {
        if (e.id === '1-0') busyWait(80);
        return Verdicts.ack();
      };
      // 2-0 starts once 1-0 gave the loop back: its own limit starts then.
      const result = await decideAll([entry('1-0'), entry('2-0'), entry('3-0')], process, options({ concurrency: 2, handlerTimeoutMs: 40 }));
      expect(result.decisions.map((d) => d.verdict)).toEqual([Verdicts.retain('handler_timeout'), Verdicts.ack(), Verdicts.ack()]);
    });

    it('still acks a quick handler', async () => {
      const result = await decideAll([entry('1-0')], late(async () => Verdicts.ack(), 0), options({ handlerTimeoutMs: 200 }));
      expect(result.decisions[0]!.verdict).toEqual(Verdicts.ack());
    });
  });

  describe('a thrown value that cannot be inspected', () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    beforeEach(() => {
      unhandled.length = 0;
      process.on('unhandledRejection', record);
    });
    afterEach(() => {
      process.off('unhandledRejection', record);
    });

    it.each(uninspectableValues())('retains %s, emits no unhandled rejection, and the round goes on', async (_, thrown) => {
      const rejecting = createProcessor(rawPayload, ({ entry: e }) => {
        if (e.id === '1-0') throw thrown;
        return 'committed';
      });
      const synchronous: EntryProcessor = (e, ctx) => {
        if (e.id === '3-0') throw thrown;
        return rejecting(e, ctx);
      };
      const entries = ['1-0', '2-0', '3-0', '4-0'].map((id) => ({ ...entry(id), fields: withPayload(entry(id)) }));
      const result = await decideAll(entries, synchronous, options({ handlerTimeoutMs: 1_000 }));
      await tick(20); // an unhandled rejection is reported after the microtask queue drains
      expect(result.decisions.map((d) => d.verdict)).toEqual([
        Verdicts.retain('handler_error'),
        Verdicts.ack(),
        Verdicts.retain('handler_error'),
        Verdicts.ack(),
      ]);
      expect(unhandled).toEqual([]);
    });
  });

  it('dead-letters an entry that repeats a field name without running its processor; the rest go on', async () => {
    const seen: string[] = [];
    const process: EntryProcessor = async (e) => {
      seen.push(e.id);
      return Verdicts.ack();
    };
    const malformed: StreamEntry = { ...entry('2-0', 'x'), repeatsFieldName: true };
    const entries = [entry('1-0', 'x'), malformed, entry('3-0', 'x')];
    const result = await decideAll(entries, process, options({ concurrency: 2, keys: entries.map(keyOf) }));
    expect(result.decisions.map((d) => d.verdict)).toEqual([Verdicts.ack(), Verdicts.deadLetter('entry_malformed'), Verdicts.ack()]);
    expect(seen).toEqual(['1-0', '3-0']);
  });
});
