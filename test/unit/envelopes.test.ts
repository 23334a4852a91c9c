/** SPEC §9 envelopes as zod schemas, and the traceparent parser that feeds handlers. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  commandEnvelopeSchema,
  encodeCommand,
  encodeResult,
  resultEnvelopeSchema,
  type CommandEnvelope,
  type ResultEnvelope,
} from '../../src/saga/envelopes';
import { parseTraceparent } from '../../src/telemetry/traceparent';
import { instanceOrderingKey } from '../../src/saga/ordering';
import type { StreamEntry } from '../../src/entry/entry';

const DIGEST = 'a'.repeat(64);
const command: CommandEnvelope = {
  command_id: 'cmd-1',
  instance_id: 'order-17',
  workflow: 'order',
  definition_version: 3,
  definition_digest: DIGEST,
  step: 'reserve_stock',
  action: 'execute',
  issued_at: '2026-04-01T12:00:00.123Z',
  input: { sku: 'A-1', qty: 2, notes: null },
};
const result: ResultEnvelope = {
  result_id: 'res-1',
  instance_id: 'order-17',
  workflow: 'order',
  definition_version: 3,
  definition_digest: DIGEST,
  step: 'reserve_stock',
  action: 'execute',
  outcome: 'succeeded',
  output: { reserved: true },
  completed_at: '2026-04-01T12:00:01+02:00',
};

describe('command envelope', () => {
  it('accepts a complete command and infers its type', () => {
    expect(commandEnvelopeSchema.parse(command)).toEqual(command);
    expectTypeOf<CommandEnvelope['action']>().toEqualTypeOf<'execute' | 'compensate'>();
    expectTypeOf<CommandEnvelope['definition_version']>().toEqualTypeOf<number>();
  });

  it.each([
    ['a missing command_id', { command_id: undefined }],
    ['an empty instance_id', { instance_id: '' }],
    ['a zero definition_version', { definition_version: 0 }],
    ['a fractional definition_version', { definition_version: 1.5 }],
    ['an uppercase digest', { definition_digest: 'A'.repeat(64) }],
    ['a short digest', { definition_digest: 'a'.repeat(63) }],
    ['an unknown action', { action: 'retry' }],
    ['a non-RFC 3339 issued_at', { issued_at: '01/04/2026' }],
    ['a missing input', { input: undefined }],
  ])('rejects %s', (_, change) => {
    expect(commandEnvelopeSchema.safeParse({ ...command, ...change }).success).toBe(false);
  });

  it('drops fields it does not know, so producers can add some first', () => {
    expect(commandEnvelopeSchema.parse({ ...command, future: 1 })).not.toHaveProperty('future');
  });

  it('encodes to the JSON bytes a consumer decodes', () => {
    expect(JSON.parse(new TextDecoder().decode(encodeCommand(command)))).toEqual(command);
    expect(() => encodeCommand({ ...command, step: '' })).toThrow();
  });
});

describe('result envelope', () => {
  const failed = { ...result, outcome: 'failed' as const, output: undefined, error: { code: 'out_of_stock', message: 'none left' } };

  it('accepts succeeded and failed results', () => {
    expect(resultEnvelopeSchema.parse(result)).toEqual(result);
    expect(resultEnvelopeSchema.parse(failed)).toMatchObject({ outcome: 'failed', error: { code: 'out_of_stock' } });
    expectTypeOf<ResultEnvelope['outcome']>().toEqualTypeOf<'succeeded' | 'failed'>();
    expect(JSON.parse(new TextDecoder().decode(encodeResult(result)))).toEqual(result);
  });

  it.each([
    ['a failed result without an error', { outcome: 'failed' }],
    ['a succeeded result with an error', { error: { code: 'x', message: 'y' } }],
    ['an error without a code', { outcome: 'failed', error: { message: 'y' } }],
    ['an unknown outcome', { outcome: 'maybe' }],
    ['a missing completed_at', { completed_at: undefined }],
    ['a missing result_id', { result_id: undefined }],
  ])('rejects %s', (_, change) => {
    expect(resultEnvelopeSchema.safeParse({ ...result, ...change }).success).toBe(false);
  });
});

describe('traceparent', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('parses a W3C traceparent into its parts', () => {
    expect(parseTraceparent(valid)).toEqual({
      traceparent: valid,
      version: '00',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      flags: 1,
      sampled: true,
    });
    expect(parseTraceparent(valid.replace(/-01$/, '-00'))?.sampled).toBe(false);
    expect(parseTraceparent(`01${valid.slice(2)}-future`)?.version).toBe('01');
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['uppercase', valid.toUpperCase()],
    ['version ff', `ff${valid.slice(2)}`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero parent id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
    ['version 00 with extra parts', `${valid}-extra`],
    ['a short trace id', '00-4bf92f35-00f067aa0ba902b7-01'],
  ])('yields no context for %s', (_, text) => {
    expect(parseTraceparent(text)).toBeUndefined();
  });
});

describe('instance ordering key', () => {
  const entryWith = (payload?: string): StreamEntry => ({
    id: '1-0',
    fields: new Map(payload === undefined ? [] : [['payload', new TextEncoder().encode(payload)]]),
    deliveries: 1,
    reclaimed: false,
  });

  it('keys saga entries by instance_id, and leaves anything else unkeyed', () => {
    expect(instanceOrderingKey(entryWith(JSON.stringify(command)))).toBe('order-17');
    expect(instanceOrderingKey(entryWith('{not json'))).toBeUndefined();
    expect(instanceOrderingKey(entryWith('null'))).toBeUndefined();
    expect(instanceOrderingKey(entryWith('{"instance_id": 7}'))).toBeUndefined();
    expect(instanceOrderingKey(entryWith())).toBeUndefined();
  });

  it('reads the payload as the envelope decoder does: a leading BOM dropped, bytes that are not UTF-8 unkeyed', () => {
    expect(instanceOrderingKey(entryWith(`\ufeff${JSON.stringify(command)}`))).toBe('order-17');
    const notUtf8 = { ...entryWith(), fields: new Map([['payload', Uint8Array.from([...new TextEncoder().encode('{"instance_id":"o'), 0xff, 0x22, 0x7d])]]) };
    expect(instanceOrderingKey(notUtf8)).toBeUndefined();
  });
});
