/**
 * Processors that answer with a plain verdict (native HMAC, synchronous handler): the round
 * decides them without promises, and every rule of decideAll still holds — throws are
 * classified, the deadline and the handler timeout are judged by the clock, ordering keys
 * hold, and a promise-returning processor in the same round is awaited and timed out as before.
 */
import { describe, expect, it } from 'vitest';
import { decideAll, type DeliveryContext, type EntryProcessor } from '../../src/consume/decide';
import type { StreamEntry } from '../../src/entry/entry';
import { parseConsumerConfig } from '../../src/consume/config';
import type { RedisPort } from '../../src/redis/port';
import { decideRound, orderingKeys, type RoundDeps } from '../../src/consume/round';
import { RunMemory } from '../../src/consume/run-memory';
import { Deferral, Rejection, Verdicts, type Verdict } from '../../src/verdict/verdict';
import { decideOptions } from '../support/poller';

const entry = (id: string, key?: string): StreamEntry => ({
  id,
  fields: new Map(key ? [['key', new TextEncoder().encode(key)]] : []),
  deliveries: 1,
  reclaimed: false,
});
const keyOf = (e: StreamEntry) => (e.fields.has('key') ? new TextDecoder().decode(e.fields.get('key')) : undefined);
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A clock the test moves by hand: the processors below "take" time by advancing it. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const options = decideOptions;

const verdictsOf = (result: { decisions: Array<{ verdict: Verdict }> }) => result.decisions.map((d) => d.verdict);

describe('decideAll with synchronous processors', () => {
  it.each([1, 3])('classifies what a synchronous processor throws and goes on (concurrency %i)', async (concurrency) => {
    const process: EntryProcessor = (e) => {
      if (e.id === '1-0') throw new Rejection('order_unknown');
      if (e.id === '2-0') throw new Error('database down');
      if (e.id === '3-0') throw new Deferral();
      return Verdicts.ack();
    };
    const result = await decideAll(['1-0', '2-0', '3-0', '4-0'].map((id) => entry(id)), process, options({ concurrency }));
    expect(verdictsOf(result)).toEqual([
      Verdicts.deadLetter('order_unknown'),
      Verdicts.retain('handler_error'),
      Verdicts.retain('deferred'),
      Verdicts.ack(),
    ]);
    expect(result.handled).toBe(4);
    expect(result.stoppedForDeadline).toBe(false);
  });

  it.each([1, 3])('retains, as a contract error, whatever a processor answers that is no verdict, and goes on (concurrency %i)', async (concurrency) => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const answers: unknown[] = [
      undefined,
      'ack',
      { kind: 'nope' },
      { kind: 'dead-letter', reason: 'Not A Reason' },
      revoked.proxy,
      Promise.resolve(undefined),
      Promise.resolve({ kind: 'dead-letter' }),
      Verdicts.ack(),
    ];
    const process = ((e: StreamEntry) => answers[Number(e.id.split('-')[0])]) as unknown as EntryProcessor;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    globalThis.process.on('unhandledRejection', onUnhandled);
    try {
      const result = await decideAll(answers.map((_, i) => entry(`${i}-0`)), process, options({ concurrency }));
      await tick(5);
      // The revoked proxy throws as soon as it is looked at (is it a promise?): retained as that throw.
      const contract = Verdicts.retain('handler_contract');
      expect(verdictsOf(result)).toEqual([contract, contract, contract, contract, Verdicts.retain('handler_error'), contract, contract, Verdicts.ack()]);
      expect(result.handled).toBe(answers.length);
    } finally {
      globalThis.process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('mixes synchronous and asynchronous processors in one round, strictly in order', async () => {
    const events: string[] = [];
    const process: EntryProcessor = (e) => {
      events.push(`start ${e.id}`);
      if (e.id === '2-0' || e.id === '4-0') {
        return tick(5).then(() => {
          events.push(`end ${e.id}`);
          return e.id === '2-0' ? Verdicts.ack(true) : Promise.reject(new Rejection('bad_thing'));
        });
      }
      events.push(`end ${e.id}`);
      return Verdicts.ack();
    };
    const result = await decideAll(['1-0', '2-0', '3-0', '4-0', '5-0'].map((id) => entry(id)), process, options());
    expect(verdictsOf(result)).toEqual([Verdicts.ack(), Verdicts.ack(true), Verdicts.ack(), Verdicts.deadLetter('bad_thing'), Verdicts.ack()]);
    expect(events).toEqual(['start 1-0', 'end 1-0', 'start 2-0', 'end 2-0', 'start 3-0', 'end 3-0', 'start 4-0', 'end 4-0', 'start 5-0', 'end 5-0']);
  });

  it('still times out an asynchronous handler among synchronous ones, and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const process: EntryProcessor = (e, ctx) => {
      if (e.id !== '2-0') return Verdicts.ack();
      signal = ctx.signal;
      return new Promise<Verdict>(() => {});
    };
    const result = await decideAll(['1-0', '2-0', '3-0'].map((id) => entry(id)), process, options({ handlerTimeoutMs: 30 }));
    expect(verdictsOf(result)).toEqual([Verdicts.ack(), Verdicts.retain('handler_timeout'), Verdicts.ack()]);
    expect(signal?.aborted).toBe(true);
  });

  it('retains a synchronous answer that came at or after the handler timeout, and aborts its signal', async () => {
    const clock = manualClock();
    let signal: AbortSignal | undefined;
    const process: EntryProcessor = (e, ctx) => {
      if (e.id === '2-0') {
        signal = ctx.signal;
        clock.advance(50); // a synchronous handler cannot be interrupted: it is judged when it returns
      }
      return Verdicts.ack();
    };
    const result = await decideAll(
      ['1-0', '2-0', '3-0'].map((id) => entry(id)),
      process,
      options({ now: clock.now, deadline: clock.now() + 10_000, handlerTimeoutMs: 50 }),
    );
    expect(verdictsOf(result)).toEqual([Verdicts.ack(), Verdicts.retain('handler_timeout'), Verdicts.ack()]);
    expect(signal?.aborted).toBe(true);
  });

  it.each([1, 2])('retains the rest of the round once the deadline is reached mid-round (concurrency %i)', async (concurrency) => {
    const clock = manualClock();
    const seen: string[] = [];
    const process: EntryProcessor = (e) => {
      seen.push(e.id);
      clock.advance(40);
      return Verdicts.ack();
    };
    // settleBy = start + 100: entries start at +0, +40, +80; the fourth would start at +120.
    const result = await decideAll(
      ['1-0', '2-0', '3-0', '4-0', '5-0'].map((id) => entry(id)),
      process,
      options({ concurrency, now: clock.now, deadline: clock.now() + 110, settleReserveMs: 10, handlerTimeoutMs: 1_000 }),
    );
    expect(seen).toEqual(['1-0', '2-0', '3-0']);
    const retained = Verdicts.retain('deadline');
    // The third starts 20 ms before settleBy with a 1 s handler timeout, so its time is the
    // deadline's: it answered at +120, after settleBy, and is retained too.
    expect(verdictsOf(result)).toEqual([Verdicts.ack(), Verdicts.ack(), retained, retained, retained]);
    expect(result.stoppedForDeadline).toBe(true);
    expect(result.handled).toBe(3);
  });

  it.each([1, 3])('holds an ordering key behind a retained synchronous verdict (concurrency %i)', async (concurrency) => {
    const seen: string[] = [];
    const process: EntryProcessor = (e) => {
      seen.push(e.id);
      if (e.id === '1-0') throw new Deferral();
      return Verdicts.ack();
    };
    const entries = [entry('1-0', 'a'), entry('2-0', 'b'), entry('3-0', 'a'), entry('4-0'), entry('5-0', 'a'), entry('6-0', 'b')];
    const result = await decideAll(entries, process, options({ concurrency, keys: entries.map(keyOf) }));
    expect(verdictsOf(result)).toEqual([
      Verdicts.retain('deferred'),
      Verdicts.ack(),
      Verdicts.retain('ordering'),
      Verdicts.ack(),
      Verdicts.retain('ordering'),
      Verdicts.ack(),
    ]);
    expect(seen.sort()).toEqual(['1-0', '2-0', '4-0', '6-0']);
  });

  it('hands a synchronous processor the entry context: deadline, scope and a signal', async () => {
    const contexts: DeliveryContext[] = [];
    const process: EntryProcessor = (_, ctx) => {
      contexts.push(ctx);
      return Verdicts.ack();
    };
    const scope = { stream: 's', group: 'g' };
    const deadline = Date.now() + 10_000;
    await decideAll([entry('1-0')], process, options({ deadline, scope }));
    expect(contexts[0]!.deadline).toBe(deadline - 10);
    expect(contexts[0]!.scope).toEqual(scope);
    expect(contexts[0]!.signal.aborted).toBe(false);
  });
});

describe('decideRound stopping with synchronous processors', () => {
  const port: RedisPort = { transport: 'tcp', cluster: false, exchange: () => Promise.reject(new Error('no Redis')), close: async () => {} };
  const config = parseConsumerConfig({ stream: 's', group: 'g', consumer: 'c', batch: 10, handlerTimeoutMs: 1_000, runBudgetMs: 60_000 });

  it('hands nothing more to the processor once stop() says so; malformed entries are still dead-lettered', async () => {
    const seen: string[] = [];
    const deps: RoundDeps = {
      port,
      config,
      now: Date.now,
      memory: new RunMemory(),
      orderingKey: keyOf,
      process: (e) => {
        seen.push(e.id);
        return e.id === '1-0' ? Verdicts.retain('deferred') : Verdicts.ack();
      },
    };
    const malformed: StreamEntry = { ...entry('4-0'), repeatsFieldName: true };
    const entries = [entry('1-0', 'a'), entry('2-0', 'b'), entry('3-0', 'c'), malformed, entry('5-0', 'a'), entry('6-0')];
    const held = new Set<string>();
    const decided = await decideRound(deps, entries, orderingKeys(deps, entries), Date.now() + 60_000, held, () => seen.length >= 2);
    expect(seen).toEqual(['1-0', '2-0']);
    expect(verdictsOf(decided)).toEqual([
      Verdicts.retain('deferred'),
      Verdicts.ack(),
      Verdicts.retain('deadline'),
      Verdicts.deadLetter('entry_malformed'),
      Verdicts.retain('ordering'),
      Verdicts.retain('deadline'),
    ]);
    expect(decided.handled).toBe(2);
    expect([...decided.handedOver]).toEqual([1, 1, 0, 0, 0, 0]);
    expect(decided.stoppedForDeadline).toBe(true);
    expect([...held]).toEqual(['a']);
    // Released: never started and not behind a held key; 5-0 waits behind 1-0's key a (held).
    expect(decided.unstarted.map((e) => e.id)).toEqual(['3-0', '6-0']);
    expect(decided.held.map((e) => e.id)).toEqual(['5-0']);
  });

  it('never starts an entry whose ordering key throws, and keeps it pending as held', async () => {
    const seen: string[] = [];
    const deps: RoundDeps = {
      port,
      config,
      now: Date.now,
      memory: new RunMemory(),
      orderingKey: (e) => {
        if (e.id === '2-0') throw new Error('no key for you');
        return keyOf(e);
      },
      process: (e) => {
        seen.push(e.id);
        return Verdicts.ack();
      },
    };
    const entries = [entry('1-0', 'a'), entry('2-0', 'b'), entry('3-0', 'c')];
    const decided = await decideRound(deps, entries, orderingKeys(deps, entries), Date.now() + 60_000, new Set(), () => false);
    expect(seen).toEqual(['1-0', '3-0']);
    expect(verdictsOf(decided)).toEqual([Verdicts.ack(), Verdicts.retain('ordering_key'), Verdicts.ack()]);
    expect(decided.held.map((e) => e.id)).toEqual(['2-0']);
    expect(decided.unstarted).toEqual([]);
  });
});
