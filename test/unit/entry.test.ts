/**
 * Reading entries and payloads exactly (SPEC §3.4, §4): field names are their exact bytes (a
 * BOM is not dropped, malformed bytes are not merged into U+FFFD); an entry that repeats a
 * field name, or has one that is not UTF-8, is marked rather than silently keeping the last
 * value, without failing its batch; a JSON or text payload that is not UTF-8 is rejected
 * rather than decoded with U+FFFD.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadLetterReasons } from '../../src/auth/reasons';
import { Fields, hasMalformedFields, parseEntries } from '../../src/entry/entry';
import { surrogateEscapedText } from '../../src/ground/text';
import { CoreReasons } from '../../src/verdict/core-reasons';
import { jsonPayload, textPayload } from '../../src/consume/processor';
import type { RedisReply } from '../../src/redis/port';
import { Rejection } from '../../src/verdict/verdict';

const bytes = (text: string) => new TextEncoder().encode(text);
const entryReply = (id: string, ...fields: string[]): RedisReply => [bytes(id), fields.map(bytes)];

describe('parseEntries', () => {
  it('marks an entry that repeats a field name, and only that entry', () => {
    const reply: RedisReply = [
      entryReply('1-0', 'event_id', 'a', 'payload', 'x'),
      entryReply('2-0', 'event_id', 'b', 'payload', 'x', 'payload', 'y'),
      entryReply('3-0', 'event_id', 'c', 'event_id', 'c'),
      entryReply('4-0', 'event_id', 'd', 'payload', 'x', 'sig', 'x'),
    ];
    const entries = parseEntries(reply, () => 1, false);
    expect(entries.map((e) => e.id)).toEqual(['1-0', '2-0', '3-0', '4-0']);
    expect(entries.map((e) => e.repeatsFieldName === true)).toEqual([false, true, true, false]);
  });

  it('names fields by their exact bytes, wire names and near misses alike', () => {
    const wire = Object.values(Fields).map(bytes);
    // A wire name, or one with a byte changed, dropped or added (a BOM, a non-UTF-8 byte), or anything.
    const nearWire = fc.tuple(fc.constantFrom(...wire), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(3)).map(([name, at, byte, how]) => {
      const i = at % name.length;
      if (how === 0) return name;
      if (how === 1) return Uint8Array.from(name, (b, j) => (j === i ? byte : b));
      if (how === 2) return Uint8Array.from([...name.slice(0, i), ...name.slice(i + 1)]);
      return Uint8Array.from([0xef, 0xbb, 0xbf, ...name]);
    });
    const name = fc.oneof(nearWire, fc.uint8Array({ maxLength: 12 }), fc.constantFrom(Uint8Array.of(0xff), Uint8Array.of(0xfe), bytes('\ufffd')));
    const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const isUtf8 = (n: Uint8Array) => {
      try {
        strict.decode(n);
        return true;
      } catch {
        return false;
      }
    };
    const hex = (n: Uint8Array) => Buffer.from(n).toString('hex');
    fc.assert(
      fc.property(fc.array(name, { maxLength: 8 }), (names) => {
        const [entry] = parseEntries([[bytes('1-0'), names.flatMap((n) => [n, bytes('v')])]], () => 1, false);
        // Distinct names are distinct byte strings, and the text of each stands for its bytes.
        const distinct = new Map(names.map((n) => [hex(n), n]));
        expect([...entry!.fields.keys()]).toEqual([...distinct.values()].map(surrogateEscapedText));
        expect(entry!.repeatsFieldName === true).toBe(distinct.size < names.length);
        expect(entry!.fieldNameNotUtf8 === true).toBe(!names.every(isUtf8));
        for (const n of names) if (isUtf8(n)) expect(entry!.fields.get(strict.decode(n))).toEqual(bytes('v'));
      }),
      { numRuns: 500 },
    );
  });

  const entryOf = (...fields: Array<string | Uint8Array>) =>
    parseEntries([[bytes('1-0'), fields.map((f) => (typeof f === 'string' ? bytes(f) : f))]], () => 1, false)[0]!;
  const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

  it('does not read a name with a BOM as the name without it', () => {
    const entry = entryOf('event_id', 'e1', Uint8Array.from([...BOM, ...bytes('payload')]), 'x');
    expect(entry.fields.get(Fields.payload)).toBeUndefined();
    expect(entry.fields.get('\ufeffpayload')).toEqual(bytes('x'));
    expect(hasMalformedFields(entry)).toBe(false);
  });

  it('keeps a name with a BOM and the name without it apart: no repeat', () => {
    const entry = entryOf('event_id', 'e1', 'payload', 'real', Uint8Array.from([...BOM, ...bytes('payload')]), 'other');
    expect(entry.repeatsFieldName).toBeUndefined();
    expect(entry.fields.size).toBe(3);
    expect(entry.fields.get(Fields.payload)).toEqual(bytes('real'));
  });

  it('marks a name that is not UTF-8, and keeps two different ones apart (no false repeat)', () => {
    const entry = entryOf('event_id', 'e1', 'payload', 'x', Uint8Array.of(0xff), 'a', Uint8Array.of(0xfe), 'b', '\ufffd', 'c');
    expect(entry.fieldNameNotUtf8).toBe(true);
    expect(entry.repeatsFieldName).toBeUndefined();
    expect(hasMalformedFields(entry)).toBe(true);
    expect(entry.fields.size).toBe(5);
    expect([...entry.fields.values()].slice(2)).toEqual([bytes('a'), bytes('b'), bytes('c')]);
    expect(entry.fields.get('\ufffd')).toEqual(bytes('c'));
  });

  it('still marks the same bytes twice as a repeat, UTF-8 or not', () => {
    expect(entryOf('event_id', 'e1', Uint8Array.of(0xff), 'a', Uint8Array.of(0xff), 'b')).toMatchObject({ repeatsFieldName: true, fieldNameNotUtf8: true });
    expect(entryOf('event_id', 'e1', '\ufeffx', 'a', '\ufeffx', 'b').repeatsFieldName).toBe(true);
  });

  it('marks each entry by its own names when neighbours share a layout or not', () => {
    const reply: RedisReply = [
      [bytes('1-0'), [bytes('event_id'), bytes('a'), Uint8Array.of(0xff), bytes('v')]],
      [bytes('2-0'), [bytes('event_id'), bytes('b'), Uint8Array.of(0xff), bytes('v')]],
      [bytes('3-0'), [bytes('event_id'), bytes('c'), bytes('x'), bytes('v')]],
      [bytes('4-0'), [Uint8Array.of(0xfe), bytes('d'), bytes('x'), bytes('v')]],
      [bytes('5-0'), [bytes('event_id'), bytes('e'), bytes('x'), bytes('v')]],
    ];
    expect(parseEntries(reply, () => 1, false).map((e) => e.fieldNameNotUtf8 === true)).toEqual([true, true, false, true, false]);
  });

  it('leaves a well-formed entry exactly as before (no extra property)', () => {
    const [entry] = parseEntries([entryReply('1-0', 'event_id', 'a')], () => 2, true);
    expect(Object.keys(entry!)).toEqual(['id', 'fields', 'deliveries', 'reclaimed']);
    expect({ ...entry, fields: new Map(entry!.fields) }).toEqual({ id: '1-0', fields: new Map([['event_id', bytes('a')]]), deliveries: 2, reclaimed: true });
  });
});

describe('payload decoders', () => {
  const schema = { safeParse: (value: unknown) => ({ success: true as const, data: value }) };
  const rejectionOf = (run: () => unknown): string | undefined => {
    try {
      run();
    } catch (error) {
      return error instanceof Rejection ? error.reason : `not a Rejection: ${String(error)}`;
    }
    return undefined;
  };
  const notUtf8 = [
    ['a lone continuation byte', Uint8Array.from([0x22, 0x80, 0x22])],
    ['a truncated sequence', Uint8Array.from([0x22, 0xc3, 0x22])],
    ['an overlong encoding', Uint8Array.from([0x22, 0xc0, 0xaf, 0x22])],
    ['an encoded surrogate', Uint8Array.from([0x22, 0xed, 0xa0, 0x80, 0x22])],
    ['0xff inside a JSON string', Uint8Array.from([...bytes('{"a":"'), 0xff, ...bytes('"}')])],
  ] as const;

  it.each(notUtf8)('jsonPayload dead-letters %s as payload_undecodable', (_, payload) => {
    expect(rejectionOf(() => jsonPayload(schema)(payload))).toBe(CoreReasons.payloadUndecodable);
  });

  it.each(notUtf8)('textPayload dead-letters %s as payload_undecodable', (_, payload) => {
    expect(rejectionOf(() => textPayload(payload))).toBe(CoreReasons.payloadUndecodable);
  });

  it('decodes well-formed UTF-8 unchanged; a leading BOM is still dropped, as before', () => {
    expect(jsonPayload(schema)(bytes('{"note":"naïve ☃ 😀"}'))).toEqual({ note: 'naïve ☃ 😀' });
    expect(jsonPayload(schema)(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('{"a":1}')]))).toEqual({ a: 1 });
    expect(textPayload(bytes('Zürich'))).toBe('Zürich');
    expect(textPayload(new Uint8Array(0))).toBe('');
  });
});

describe('public dead-letter reasons', () => {
  it('are all listed in the README "Verdicts" section', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Verdicts'), readme.indexOf('\n## ', readme.indexOf('## Verdicts') + 1));
    for (const reason of [...Object.values(CoreReasons), ...Object.values(DeadLetterReasons)]) {
      expect(section, reason).toContain(`\`${reason}\``);
    }
  });
});
