/**
 * The byte-to-text rules (src/ground/text.ts, SPEC §3.4 "Exact bytes"): display text keeps a
 * leading BOM; surrogate-escaped text stands for any bytes one to one, is the exact text of
 * well-formed UTF-8, and never equals the text of well-formed UTF-8 when the bytes are not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeText, exactUtf8Text, surrogateEscapedText } from '../../src/ground/text';

const utf8 = new TextEncoder();
const BOM = [0xef, 0xbb, 0xbf];

/** Inverse of surrogateEscapedText: escapes back to their byte, everything else as UTF-8. */
function unescape(text: string): Uint8Array {
  const out: number[] = [];
  let run = '';
  const flush = () => {
    out.push(...utf8.encode(run));
    run = '';
  };
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    const paired = i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff;
    if (unit >= 0xdc80 && unit <= 0xdcff && !paired) {
      flush();
      out.push(unit - 0xdc00);
    } else run += text[i];
  }
  flush();
  return Uint8Array.from(out);
}

/** Bytes near the edges of UTF-8: truncated, overlong, surrogate and out-of-range sequences, BOMs. */
const awkwardBytes = fc.array(
  fc.oneof(
    fc.uint8Array({ maxLength: 6 }),
    fc.constantFrom([0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf], [0xf0, 0x90, 0x80], BOM, [0xef, 0xbf, 0xbd]).map((b) => Uint8Array.from(b)),
    fc.string({ unit: 'grapheme', maxLength: 4 }).map((t) => utf8.encode(t)),
  ),
  { maxLength: 6 },
).map((parts) => Uint8Array.from(parts.flatMap((p) => [...p])));

describe('surrogateEscapedText', () => {
  it('is undone exactly by its inverse, so different bytes never give the same text', () => {
    fc.assert(
      fc.property(awkwardBytes, (bytes) => {
        expect(unescape(surrogateEscapedText(bytes))).toEqual(bytes);
      }),
      { numRuns: 3000 },
    );
  });

  it('is the exact text of well-formed UTF-8, and holds a lone surrogate exactly when the bytes are not UTF-8', () => {
    fc.assert(
      fc.property(awkwardBytes, (bytes) => {
        const exact = exactUtf8Text(bytes);
        const text = surrogateEscapedText(bytes);
        if (exact !== undefined) expect(text).toBe(exact);
        // Well-formed UTF-8 decodes to well-formed UTF-16; an escape is a lone surrogate.
        expect(/(?:[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/.test(text)).toBe(exact === undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps apart what a lenient decoder merges', () => {
    expect(surrogateEscapedText(Uint8Array.of(0xff))).toBe('\udcff');
    expect(surrogateEscapedText(Uint8Array.of(0xfe))).toBe('\udcfe');
    expect(surrogateEscapedText(Uint8Array.of(0xef, 0xbf, 0xbd))).toBe('\ufffd');
    expect(surrogateEscapedText(Uint8Array.of(0x61, 0xc3, 0x28))).toBe('a\udcc3(');
    expect(surrogateEscapedText(Uint8Array.of(...BOM, 0x61))).toBe('\ufeffa');
    expect(decodeText(Uint8Array.of(0xff))).toBe(decodeText(Uint8Array.of(0xfe)));
  });
});

describe('decodeText', () => {
  it('keeps a leading BOM: text for display starts as its bytes do', () => {
    expect(decodeText(Uint8Array.from([...BOM, ...utf8.encode('dup-1')]))).toBe('\ufeffdup-1');
    expect(decodeText(utf8.encode('naïve'))).toBe('naïve');
  });
});
