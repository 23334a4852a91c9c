/**
 * SPEC §3.2 against the committed vectors, in both directions: the product signs every case
 * to the expected hex, and verifies the expected hex; any change to a signed field, the
 * stream, or the signature's spelling fails verification.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { webCryptoHmac } from '../../src/auth/hmac';
import { nodeHmac, plainNodeHmac } from '../../src/node/crypto';
import { CanonicalEncoder, canonicalMessage, type SignedFields } from '../../src/auth/canonical';
import { constantTimeEqualHex } from '../../src/auth/constant-time';
import { fromHex, toHex } from '../../src/auth/hex';
import { SecretKey } from '../../src/auth/secret';
import { signEntry, verifyEntry } from '../../src/auth/signature';

type Bytes = { hex: string } | { base64: string } | { repeat_hex: string; times: number };
interface VectorCase {
  name: string;
  key: Bytes;
  stream: string;
  event_id: string;
  event: string;
  payload: Bytes;
  traceparent: string | null;
  canonical_length: number;
  canonical_sha256: string;
  canonical_hex?: string;
  sig: string;
}

interface VectorFile {
  about: string;
  format: { describes: string; fields: Array<{ field: string; meaning: string }> };
  cases: VectorCase[];
}

const vectors = JSON.parse(readFileSync(new URL('../vectors/signatures.json', import.meta.url), 'utf8')) as VectorFile;

function bytesOf(spec: Bytes): Uint8Array {
  if ('hex' in spec) return Uint8Array.from(Buffer.from(spec.hex, 'hex'));
  if ('base64' in spec) return Uint8Array.from(Buffer.from(spec.base64, 'base64'));
  const unit = Buffer.from(spec.repeat_hex, 'hex');
  return Uint8Array.from(Buffer.alloc(unit.length * spec.times, unit));
}

function fieldsOf(c: VectorCase): SignedFields {
  return { stream: c.stream, eventId: c.event_id, eventType: c.event, payload: bytesOf(c.payload), traceparent: c.traceparent ?? undefined };
}

const flipLastBit = (hex: string) => hex.slice(0, -1) + (Number.parseInt(hex.slice(-1), 16) ^ 1).toString(16);

describe('signature vectors', () => {
  it('covers the cases the contract promises', () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(8);
    const names = vectors.cases.map((c) => c.name).join('\n');
    for (const topic of ['no traceparent', 'empty traceparent', 'unicode', 'length-prefix', 'empty payload', '1 MiB', 'payments']) {
      expect(names).toContain(topic);
    }
    expect(vectors.cases.some((c) => bytesOf(c.payload).length === 1024 * 1024)).toBe(true);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s: canonical bytes match', (_, c) => {
    const message = canonicalMessage(fieldsOf(c));
    expect(message.length).toBe(c.canonical_length);
    expect(createHash('sha256').update(message).digest('hex')).toBe(c.canonical_sha256);
    if (c.canonical_hex !== undefined) expect(toHex(message)).toBe(c.canonical_hex);
  });

  it('grows and reuses its buffer without leaking a previous tail, up to its size limit', () => {
    const encoder = new CanonicalEncoder();
    const fields = (size: number): SignedFields => ({ stream: 's', eventId: 'e', eventType: 't', payload: new Uint8Array(size).fill(size % 251) });
    for (const size of [10, 5_000, 100, 1_048_000, 50, 2_000_000, 7]) {
      const same = Buffer.from(encoder.encode(fields(size))).equals(canonicalMessage(fields(size)));
      expect(same, `payload of ${size} B`).toBe(true);
    }
  });

  it('equals canonicalMessage through one reused encoder for random field sequences, sizes often repeating', () => {
    const bytes = fc.integer({ min: 0, max: 3 }).chain((size) => fc.uint8Array({ minLength: [0, 7, 300, 1_500][size]!, maxLength: [0, 7, 300, 1_500][size]! }));
    const signed = fc.record({
      stream: fc.oneof(fc.string(), bytes),
      eventId: bytes,
      eventType: fc.oneof(fc.string(), bytes),
      payload: bytes,
      traceparent: fc.option(fc.oneof(fc.string(), bytes), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(signed, { minLength: 1, maxLength: 8 }), (sequence) => {
        const encoder = new CanonicalEncoder();
        for (const fields of sequence) expect(Buffer.from(encoder.encode(fields)).equals(canonicalMessage(fields))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('encodes every case to the same bytes through one reused encoder, in any order', () => {
    const encoder = new CanonicalEncoder();
    // Largest first and then small ones: a reused buffer must never leak a previous tail.
    const ordered = [...vectors.cases].sort((a, b) => b.canonical_length - a.canonical_length);
    for (const c of [...ordered, ...ordered.reverse()]) {
      const encoded = encoder.encode(fieldsOf(c));
      expect(encoded.length).toBe(c.canonical_length);
      expect(createHash('sha256').update(encoded).digest('hex')).toBe(c.canonical_sha256);
    }
  });

});

// Every engine must produce the contract's bytes: Web Crypto (portable default) and Node's
// native HMAC (installed by Node entry points for throughput).
describe.each([webCryptoHmac, nodeHmac, plainNodeHmac])('signature vectors on the $name engine', (engine) => {
  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s: signs to the expected hex', async (_, c) => {
    expect(await signEntry(new SecretKey(bytesOf(c.key)), fieldsOf(c), engine)).toBe(c.sig);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s: verifies, and rejects any alteration', async (_, c) => {
    const key = new SecretKey(bytesOf(c.key));
    const fields = fieldsOf(c);
    expect(await verifyEntry(key, fields, c.sig, engine)).toBe(true);
    expect(await verifyEntry(key, fields, flipLastBit(c.sig), engine)).toBe(false);
    expect(await verifyEntry(key, fields, c.sig.toUpperCase(), engine)).toBe(false);
    expect(await verifyEntry(key, fields, c.sig.slice(0, -2), engine)).toBe(false);
    expect(await verifyEntry(key, { ...fields, stream: `${c.stream}x` }, c.sig, engine)).toBe(false);
    expect(await verifyEntry(key, { ...fields, traceparent: fields.traceparent === undefined ? '' : undefined }, c.sig, engine)).toBe(false);
    const other = Uint8Array.from(bytesOf(c.key), (b, i) => (i === 0 ? b ^ 1 : b));
    expect(await verifyEntry(new SecretKey(other), fields, c.sig, engine)).toBe(false);
  });

  it('verifies every case correctly through one shared encoder with all calls in flight at once', async () => {
    const encoder = new CanonicalEncoder();
    const cases = vectors.cases.map((c) => ({ key: new SecretKey(bytesOf(c.key)), fields: fieldsOf(c), sig: c.sig }));
    // All started before any is awaited: if the encoder's reused buffer reached an engine
    // that reads it after an await, that engine would verify someone else's bytes.
    const pending = cases.map((c) => verifyEntry(c.key, c.fields, c.sig, engine, encoder));
    const tampered = cases.map((c) => verifyEntry(c.key, c.fields, flipLastBit(c.sig), engine, encoder));
    expect(await Promise.all(pending)).toEqual(cases.map(() => true));
    expect(await Promise.all(tampered)).toEqual(cases.map(() => false));
  });

});

describe('native engine construction', () => {
  it('equals createHmac for every key length class and message size, with its buffers reused', () => {
    // Sizes around the SHA-256 padding boundaries, a large one that grows the reused buffer,
    // then small ones again (no stale tail), and one past the one-shot limit.
    const sizes = [0, 1, 55, 56, 63, 64, 65, 1000, 70_000, 3, 119, 256 * 1024, 256 * 1024 + 1, 10];
    for (const keyLength of [1, 32, 63, 64, 65, 100, 200]) {
      const keyBytes = randomBytes(keyLength);
      const key = new SecretKey(keyBytes);
      for (const size of sizes) {
        const message = randomBytes(size);
        const expected = createHmac('sha256', keyBytes).update(message).digest('hex');
        expect(toHex(nodeHmac.mac(key, message) as Uint8Array), `key ${keyLength} B, message ${size} B`).toBe(expected);
      }
    }
  });
});

/** Every object in a JSON value, with its path. */
function objectsIn(value: unknown, path = '$'): Array<[string, Record<string, unknown>]> {
  if (Array.isArray(value)) return value.flatMap((item, i) => objectsIn(item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return [[path, value as Record<string, unknown>], ...Object.entries(value).flatMap(([k, v]) => objectsIn(v, `${path}.${k}`))];
}

describe('signature vectors, structure', () => {
  it('keeps the format description apart from the cases: nothing outside "cases" looks like a case', () => {
    expect(Object.keys(vectors)).toEqual(['about', 'format', 'cases']);
    const caseLike = objectsIn(vectors).filter(([, o]) => 'sig' in o || 'key' in o || 'event_id' in o);
    expect(caseLike.map(([path]) => path)).toEqual(vectors.cases.map((_, i) => `$.cases[${i}]`));
  });

  it('gives every case exactly the fields its format lists, with their types', () => {
    const documented = vectors.format.fields.map((f) => f.field);
    const optional = ['canonical_hex'];
    for (const c of vectors.cases) {
      expect(Object.keys(c).sort(), c.name).toEqual(documented.filter((f) => !optional.includes(f) || f in c).sort());
      for (const text of ['name', 'stream', 'event_id', 'event', 'canonical_sha256', 'sig'] as const) expect(typeof c[text], `${c.name}: ${text}`).toBe('string');
      expect(c.traceparent === null || typeof c.traceparent === 'string').toBe(true);
      expect(Number.isInteger(c.canonical_length)).toBe(true);
      expect(c.sig).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('keeps absent and empty traceparent apart, and field boundaries unambiguous', () => {
    const byName = (part: string) => vectors.cases.find((c) => c.name.includes(part))!.sig;
    expect(byName('no traceparent')).not.toBe(byName('empty traceparent'));
    expect(byName('part A')).not.toBe(byName('part B'));
    expect(byName('stream "payments"')).not.toBe(byName('"payments:replica"'));
  });
});

describe('hex', () => {
  it('round-trips bytes as lowercase hex and refuses anything else', () => {
    const bytes = Uint8Array.from([0, 1, 0xab, 0xff]);
    expect(toHex(bytes)).toBe('0001abff');
    expect(fromHex('0001abff')).toEqual(bytes);
    expect(fromHex('')).toEqual(new Uint8Array(0));
    for (const bad of ['0001ABFF', 'abc', 'zz', '0x00', ' 00']) expect(fromHex(bad)).toBeUndefined();
  });

  it('compares a hex digest with bytes: every byte value matches itself and no other', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(constantTimeEqualHex(toHex(all), all)).toBe(true);
    for (let i = 0; i < all.length; i += 1) {
      for (let bit = 0; bit < 8; bit += 1) {
        const altered = Uint8Array.from(all);
        altered[i] = altered[i]! ^ (1 << bit);
        expect(constantTimeEqualHex(toHex(all), altered)).toBe(false);
      }
    }
    expect(constantTimeEqualHex(toHex(all), all.subarray(1))).toBe(false);
    expect(constantTimeEqualHex('', new Uint8Array(0))).toBe(true);
  });
});
