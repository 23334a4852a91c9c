/**
 * EntryFields stands in for the Map an entry's fields used to be (issue 15): whatever the
 * names — repeated, binary, empty, shared with the previous entry or not — every ReadonlyMap
 * method answers exactly what a Map built by `set` in stream order answers. Checked against
 * that Map on random batches, where consecutive entries often share their names (the layout
 * reuse path) and often do not.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Fields, parseEntries } from '../../src/entry/entry';
import type { EntryFields } from '../../src/entry/entry-fields';
import { ReplyShapeError } from '../../src/ground/errors';
import { exactUtf8Text, surrogateEscapedText } from '../../src/ground/text';
import type { RedisReply } from '../../src/redis/port';

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

/**
 * What the fields were before EntryFields: a Map filled in stream order, its names the text
 * that stands for their exact bytes (SPEC §3.4; test/unit/text.test.ts checks that text).
 */
function mapOf(pairs: readonly Uint8Array[]): Map<string, Uint8Array> {
  const map = new Map<string, Uint8Array>();
  for (let i = 0; i + 1 < pairs.length; i += 2) map.set(surrogateEscapedText(pairs[i]!), pairs[i + 1]!);
  return map;
}

function expectSameAsMap(fields: ReadonlyMap<string, Uint8Array>, expected: Map<string, Uint8Array>, probes: readonly string[]): void {
  expect(fields.size).toBe(expected.size);
  for (const name of [...expected.keys(), ...probes]) {
    expect(fields.get(name)).toBe(expected.get(name));
    expect(fields.has(name)).toBe(expected.has(name));
  }
  expect([...fields]).toEqual([...expected]);
  expect([...fields.entries()]).toEqual([...expected.entries()]);
  expect([...fields.keys()]).toEqual([...expected.keys()]);
  expect([...fields.values()]).toEqual([...expected.values()]);
  const seen: Array<[string, Uint8Array]> = [];
  fields.forEach((value, key, map) => {
    expect(map).toBe(fields);
    seen.push([key, value]);
  });
  expect(seen).toEqual([...expected]);
}

describe('EntryFields', () => {
  // Names drawn from a small set (so repeats and shared layouts are common) or any bytes.
  const wire = Object.values(Fields).map(bytes);
  const name = fc.oneof(
    fc.constantFrom(...wire, bytes('a'), bytes(''), Uint8Array.from([0xff, 0x00]), Uint8Array.from([0xfe, 0x00]), bytes('\ufffd\0'), bytes('\ufeffpayload')),
    fc.uint8Array({ maxLength: 10 }),
  );
  const value = fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ maxLength: 20 }));
  const layout = fc.array(name, { maxLength: 20 });
  const entryPairs = (names: Uint8Array[]) => fc.tuple(...names.map(() => value)).map((values) => names.flatMap((n, i) => [n, values[i]!]));
  // A batch: each entry either reuses the previous entry's names, or has its own.
  const batch = fc
    .array(fc.tuple(fc.boolean(), layout), { minLength: 1, maxLength: 6 })
    .map((steps) => {
      const layouts: Uint8Array[][] = [];
      for (const [reuse, names] of steps) layouts.push(reuse && layouts.length > 0 ? layouts[layouts.length - 1]! : names);
      return layouts;
    })
    .chain((layouts) => fc.tuple(...layouts.map(entryPairs)));

  it('answers every Map method as the Map filled in stream order would, entry by entry', () => {
    fc.assert(
      fc.property(batch, (pairsList) => {
        const reply: RedisReply = pairsList.map((pairs, i) => [bytes(`${i + 1}-0`), pairs]);
        const entries = parseEntries(reply, () => 1, false);
        expect(entries.map((e) => e.id)).toEqual(pairsList.map((_, i) => `${i + 1}-0`));
        entries.forEach((entry, i) => {
          const expected = mapOf(pairsList[i]!);
          expectSameAsMap(entry.fields, expected, ['absent', 'payload', '']);
          expect(entry.repeatsFieldName === true).toBe(expected.size < pairsList[i]!.length / 2);
          const names = pairsList[i]!.filter((_, k) => k % 2 === 0);
          expect(entry.fieldNameNotUtf8 === true).toBe(names.some((n) => exactUtf8Text(n) === undefined));
        });
      }),
      { numRuns: 400 },
    );
  });

  it('keeps the values byte for byte, as views of the reply', () => {
    const value = Uint8Array.from([0x00, 0xff, 0xc3, 0x28, 0x00]);
    const [entry] = parseEntries([[bytes('1-0'), [Uint8Array.from([0xff]), value, bytes('payload'), new Uint8Array(0)]]], () => 1, false);
    expect(entry!.fields.get('\udcff')).toBe(value);
    expect(entry!.fields.get('\ufffd')).toBeUndefined();
    expect(entry!.fields.get('payload')).toEqual(new Uint8Array(0));
  });

  it('counts the last value of a repeated name once when sizing an entry', () => {
    const repeated = [bytes('payload'), bytes('xxxxxxxxxx'), bytes('payload'), bytes('yy')];
    const [entry] = parseEntries([[bytes('1-0'), repeated]], () => 1, false);
    // "payload" (7) + its last value (2), as the Map it stands for holds.
    expect((entry!.fields as EntryFields).byteSize()).toBe(7 + 2);
    expect(entry!.repeatsFieldName).toBe(true);
  });

  it('shows its fields when inspected', () => {
    const [entry] = parseEntries([[bytes('1-0'), [bytes('event_id'), bytes('e1')]]], () => 1, false);
    expect(inspect(entry!.fields)).toBe(inspect(new Map([['event_id', bytes('e1')]])));
  });

  it.each<[string, RedisReply]>([
    ['fields that are not an array', [[bytes('1-0'), bytes('event_id')]]],
    ['a field name that is not a string', [[bytes('1-0'), [7, bytes('v')]]]],
    ['a field value that is not a string', [[bytes('1-0'), [bytes('event_id'), [bytes('v')]]]]],
    ['a field value that is nil', [[bytes('1-0'), [bytes('event_id'), null]]]],
    ['an id that is not a string', [[[bytes('1-0')], [bytes('event_id'), bytes('v')]]]],
    ['an entry that is not an array', [bytes('1-0')]],
  ])('refuses %s with a ReplyShapeError', (_, reply) => {
    expect(() => parseEntries(reply, () => 1, false)).toThrow(ReplyShapeError);
  });

  it('refuses a malformed entry after a well-formed one with the same names', () => {
    const good = [bytes('event_id'), bytes('a')];
    expect(() => parseEntries([[bytes('1-0'), good], [bytes('2-0'), [bytes('event_id'), 5]]], () => 1, false)).toThrow(ReplyShapeError);
  });
});
