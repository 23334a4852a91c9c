#!/usr/bin/env node
// Writes test/vectors/signatures.json: the SPEC §3.2 signature vectors. Computed here with
// node:crypto and an independent canonical encoder, so the tests compare the product's Web
// Crypto implementation against a second implementation, not against itself.
// Run: node test/vectors/generate-signatures.mjs
import { createHash, createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const key32 = { hex: Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex') };
const json = (value) => ({ hex: Buffer.from(JSON.stringify(value), 'utf8').toString('hex') });
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const base = { key: key32, stream: 'orders', event_id: 'evt-0001', event: 'order.placed', payload: json({ order: 'o-1' }) };

const cases = [
  { name: 'basic entry with a traceparent', ...base, traceparent: TP },
  { name: 'no traceparent (presence flag "0")', ...base, traceparent: null },
  { name: 'empty traceparent (presence flag "1", zero-length value): differs from absent', ...base, traceparent: '' },
  {
    name: 'unicode event type and payload',
    ...base,
    event: '订单.创建',
    payload: json({ note: 'naïve ☃ 😀', city: 'Zürich' }),
    traceparent: null,
  },
  {
    name: 'payload containing length-prefix bytes',
    ...base,
    payload: { hex: '0000000568656c6c6f00000001310000000000000000' },
    traceparent: null,
  },
  { name: 'field boundary shift, part A: event_id "ab", event "c"', ...base, event_id: 'ab', event: 'c', traceparent: null },
  { name: 'field boundary shift, part B: event_id "a", event "bc" (same naive concatenation as A)', ...base, event_id: 'a', event: 'bc', traceparent: null },
  { name: 'empty payload', ...base, payload: { hex: '' }, traceparent: null },
  { name: '1 MiB payload', ...base, payload: { repeat_hex: 'ab', times: 1048576 }, traceparent: TP },
  { name: 'same fields on stream "payments" (compare with the next case: cross-stream replay)', ...base, stream: 'payments', traceparent: TP },
  { name: 'same fields on stream "payments:replica"', ...base, stream: 'payments:replica', traceparent: TP },
  { name: 'non-UTF-8 payload bytes', ...base, payload: { base64: Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x1b]).toString('base64') }, traceparent: null },
  {
    name: 'key longer than the HMAC-SHA256 block (100 bytes, hashed first by HMAC)',
    ...base,
    key: { base64: Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 7 + 3) & 0xff)).toString('base64') },
    traceparent: TP,
  },
];

function bytesOf(spec) {
  if ('hex' in spec) return Buffer.from(spec.hex, 'hex');
  if ('base64' in spec) return Buffer.from(spec.base64, 'base64');
  if ('repeat_hex' in spec) return Buffer.alloc(Buffer.from(spec.repeat_hex, 'hex').length * spec.times, Buffer.from(spec.repeat_hex, 'hex'));
  throw new Error('unknown byte encoding');
}

function canonical(c) {
  const parts = [
    Buffer.from(c.stream, 'utf8'),
    Buffer.from(c.event_id, 'utf8'),
    Buffer.from(c.event, 'utf8'),
    bytesOf(c.payload),
    Buffer.from(c.traceparent === null ? '0' : '1'),
    Buffer.from(c.traceparent ?? '', 'utf8'),
  ];
  return Buffer.concat(parts.flatMap((part) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.length);
    return [length, part];
  }));
}

const MAX_INLINE_CANONICAL = 4096;
const out = {
  about:
    'Signature test vectors for saga-streams entries (SPEC §3.2). sig = lowercase hex of HMAC-SHA256(key, C), where C is, for each of ' +
    'stream name, event_id, event, payload, presence flag ("1" when a traceparent is present, else "0"), traceparent bytes (empty when absent), ' +
    'a 4-byte big-endian length followed by the bytes. Any implementation must produce every sig below and verify it.',
  // How to read a case, as a list of {field, meaning}: an object shaped like a case
  // (with key, sig, ...) outside `cases` could be taken for one by a checker.
  format: {
    describes: 'each object in "cases"',
    fields: [
      { field: 'name', meaning: 'what the case exercises' },
      { field: 'key', meaning: 'bytes: {"hex": "..."} or {"base64": "..."}' },
      { field: 'stream', meaning: 'text, UTF-8' },
      { field: 'event_id', meaning: 'text, UTF-8' },
      { field: 'event', meaning: 'text, UTF-8' },
      { field: 'payload', meaning: 'bytes: {"hex": "..."}, {"base64": "..."}, or {"repeat_hex": "<hex>", "times": n} = the decoded hex repeated n times' },
      { field: 'traceparent', meaning: 'text, UTF-8; null means the field is absent (flag "0"); "" means present and empty (flag "1")' },
      { field: 'canonical_length', meaning: 'length of C in bytes' },
      { field: 'canonical_sha256', meaning: 'lowercase hex SHA-256 of C, to locate an encoding mistake' },
      { field: 'canonical_hex', meaning: `C itself in hex, only when C is at most ${MAX_INLINE_CANONICAL} bytes (optional)` },
      { field: 'sig', meaning: 'expected signature: lowercase hex HMAC-SHA256(key, C)' },
    ],
  },
  cases: cases.map((c) => {
    const message = canonical(c);
    return {
      ...c,
      canonical_length: message.length,
      canonical_sha256: createHash('sha256').update(message).digest('hex'),
      ...(message.length <= MAX_INLINE_CANONICAL ? { canonical_hex: message.toString('hex') } : {}),
      sig: createHmac('sha256', bytesOf(c.key)).update(message).digest('hex'),
    };
  }),
};

const target = join(dirname(fileURLToPath(import.meta.url)), 'signatures.json');
writeFileSync(target, `${JSON.stringify(out, null, 2)}\n`);
console.log(`wrote ${out.cases.length} cases to ${target}`);
