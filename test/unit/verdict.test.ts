/**
 * SPEC §4's edge rows as pure logic: only the success values ack, a thrown value that
 * cannot be inspected is retained without throwing again, and every processor maps its
 * handler's return value the same way.
 */
import { describe, expect, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import type { DeliveryContext, EntryProcessor } from '../../src/consume/decide';
import type { StreamEntry } from '../../src/entry/entry';
import { describeThrown, errorCode } from '../../src/ground/errors';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { createEnvelopeProcessor } from '../../src/saga/envelope-processor';
import { Verdicts, verdictOfOutcome, verdictOfThrown } from '../../src/verdict/verdict';
import { uninspectableValues } from '../support/thrown-values';
describe('verdictOfOutcome', () => {
  it.each([
    ['nothing', undefined, Verdicts.ack()],
    ["'committed'", 'committed', Verdicts.ack()],
    ["'duplicate'", 'duplicate', Verdicts.ack(true)],
  ])('acks %s', (_, outcome, verdict) => {
    expect(verdictOfOutcome(outcome)).toEqual(verdict);
  });

  it.each([
    ['false', false],
    ["'retry'", 'retry'],
    ['null', null],
    ['true', true],
    ['0', 0],
    ["''", ''],
    ["'Committed'", 'Committed'],
    ['an object', { ok: true }],
    ['a verdict', Verdicts.ack()],
  ])('retains %s as a programming error (handler_contract)', (_, outcome) => {
    expect(verdictOfOutcome(outcome)).toEqual(Verdicts.retain('handler_contract'));
  });
});

describe('verdictOfThrown', () => {
  it.each(uninspectableValues())('retains %s without throwing', (_, thrown) => {
    expect(verdictOfThrown(thrown)).toEqual(Verdicts.retain('handler_error'));
  });

  it('still reads inspectable values by code', () => {
    expect(verdictOfThrown({ code: 'REJECTION', reason: 'order_unknown' })).toEqual(Verdicts.deadLetter('order_unknown'));
    expect(verdictOfThrown({ code: 'DEFERRAL' })).toEqual(Verdicts.retain('deferred'));
    expect(verdictOfThrown('a string')).toEqual(Verdicts.retain('handler_error'));
  });
});

describe('errorCode', () => {
  it.each(uninspectableValues())('never throws for %s, and gives no code it cannot read', (name, thrown) => {
    expect(errorCode(thrown)).toBe(name.startsWith('a Rejection-like') ? 'REJECTION' : undefined);
  });
});

describe('describeThrown', () => {
  it.each(uninspectableValues())('never throws for %s', (_, thrown) => {
    expect(typeof describeThrown(thrown).name).toBe('string');
  });

  it('describes an Error by name, code and message, anything else by its type only', () => {
    expect(describeThrown(new TypeError('bad'))).toEqual({ name: 'TypeError', message: 'bad' });
    expect(describeThrown(Object.assign(new Error('down'), { code: 'ECONNREFUSED' }))).toEqual({ name: 'Error', code: 'ECONNREFUSED', message: 'down' });
    expect(describeThrown('secret-ish string')).toEqual({ name: 'string' });
    expect(describeThrown(null)).toEqual({ name: 'object' });
  });
});

describe('every processor maps its handler outcome the same way', () => {
  const utf8 = new TextEncoder();
  const context: DeliveryContext = { deadline: Date.now() + 60_000, signal: new AbortController().signal };
  const auth = { mode: 'exclusive-stream', producer: 'shop' } as const;
  const entry = (payload: string): StreamEntry => ({
    id: '1-0',
    fields: new Map([
      ['event', utf8.encode('order.placed')],
      ['event_id', utf8.encode('e1')],
      ['payload', utf8.encode(payload)],
    ]),
    deliveries: 1,
    reclaimed: false,
  });
  const processors: Array<[string, (outcome: unknown) => EntryProcessor, string]> = [
    ['createProcessor', (outcome) => createProcessor(rawPayload, () => outcome as never), 'x'],
    ['createSignedProcessor', (outcome) => createSignedProcessor({ stream: 's', auth, decode: rawPayload, handler: () => outcome as never }), 'x'],
    [
      'createEnvelopeProcessor',
      (outcome) =>
        createEnvelopeProcessor({
          stream: 's',
          auth,
          decode: (bytes) => JSON.parse(new TextDecoder().decode(bytes)) as { id: string },
          idOf: (envelope) => envelope.id,
          instanceOf: () => 'i1',
          gate: () => undefined,
          handler: () => outcome as never,
        }),
      '{"id":"e1"}',
    ],
  ];

  it.each(processors)('%s: false, "retry" and null are retained as handler_contract; the success values ack', async (_, build, payload) => {
    for (const outcome of [false, 'retry', null]) {
      expect(await build(outcome)(entry(payload), context)).toEqual(Verdicts.retain('handler_contract'));
      expect(await build(Promise.resolve(outcome))(entry(payload), context)).toEqual(Verdicts.retain('handler_contract'));
    }
    expect(await build(undefined)(entry(payload), context)).toEqual(Verdicts.ack());
    expect(await build('committed')(entry(payload), context)).toEqual(Verdicts.ack());
    expect(await build('duplicate')(entry(payload), context)).toEqual(Verdicts.ack(true));
  });
});
