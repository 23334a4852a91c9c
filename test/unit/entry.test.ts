/**
 * Reading entries and payloads exactly (SPEC §4): an entry that repeats a field name is
 * marked rather than silently keeping the last value, without failing its batch; a JSON or
 * text payload that is not UTF-8 is rejected rather than decoded with U+FFFD.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadLetterReasons } from '../../src/auth/reasons';
import { Fields, parseEntries } from '../../src/entry';
import { CoreReasons } from '../../src/core-reasons';
import { jsonPayload, textPayload } from '../../src/processor';
import type { RedisReply } from '../../src/redis/port';
import { Rejection } from '../../src/verdict';

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

  it('names fields exactly as their decoded text, wire names and near misses alike', () => {
    const wire = Object.values(Fields).map(bytes);
    // A wire name, or one with a byte changed, dropped or added (a BOM, a non-UTF-8 byte), or anything.
    const nearWire = fc.tuple(fc.constantFrom(...wire), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(3)).map(([name, at, byte, how]) => {
      const i = at % name.length;
      if (how === 0) return name;
      if (how === 1) return Uint8Array.from(name, (b, j) => (j === i ? byte : b));
      if (how === 2) return Uint8Array.from([...name.slice(0, i), ...name.slice(i + 1)]);
      return Uint8Array.from([0xef, 0xbb, 0xbf, ...name]);
    });
    const name = fc.oneof(nearWire, fc.uint8Array({ maxLength: 12 }));
    const decoder = new TextDecoder();
    fc.assert(
      fc.property(fc.array(name, { maxLength: 8 }), (names) => {
        const [entry] = parseEntries([[bytes('1-0'), names.flatMap((n) => [n, bytes('v')])]], () => 1, false);
        const expected = new Map(names.map((n) => [decoder.decode(n), bytes('v')]));
        expect([...entry!.fields.keys()]).toEqual([...expected.keys()]);
        expect(entry!.repeatsFieldName === true).toBe(expected.size < names.length);
      }),
      { numRuns: 500 },
    );
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
