/**
 * The poison catalogue (scenario 6): entries XADDed directly, each with the dead-letter
 * reasons SPEC §4 allows for it. Signatures are computed here independently of the product
 * (SPEC §3.2: HMAC-SHA256 over length-prefixed stream, event_id, event, payload, presence
 * flag, traceparent), so a correctly signed entry reaches the check it is meant to hit.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Rng } from './rng';

export interface PoisonEntry {
  readonly label: string;
  readonly eventId: string;
  /** Field/value pairs in wire order. */
  readonly fields: Buffer[];
  readonly reasons: readonly string[];
}

export interface SigningKey {
  readonly keyId: string;
  readonly secret: string;
}

const b = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value, 'utf8') : value);

export function sign(key: SigningKey, stream: string, eventId: Buffer, event: Buffer, payload: Buffer, traceparent?: Buffer): string {
  const parts = [b(stream), eventId, event, payload, b(traceparent === undefined ? '0' : '1'), traceparent ?? Buffer.alloc(0)];
  const hmac = createHmac('sha256', Buffer.from(key.secret, 'utf8'));
  for (const part of parts) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.length);
    hmac.update(length).update(part);
  }
  return hmac.digest('hex');
}

/** A signed entry from named fields (missing ones sign as empty, as the verifier reads them). */
function signed(key: SigningKey, stream: string, fields: Array<[string, Buffer | string]>): Buffer[] {
  // The last value of a repeated field: what a reader that keeps the last one would verify.
  const get = (name: string) => b(fields.findLast(([f]) => f === name)?.[1] ?? '');
  const sig = sign(key, stream, get('event_id'), get('event'), get('payload'));
  return [...fields, ['key_id', key.keyId], ['sig', sig]].flatMap(([f, v]) => [b(f), b(v)]) as Buffer[];
}

function plain(fields: Array<[string, Buffer | string]>): Buffer[] {
  return fields.flatMap(([f, v]) => [b(f), b(v)]);
}

const MIB = 1024 * 1024;

/**
 * One round of the catalogue. `prefix` makes event ids unique; `otherStream` is the stream
 * whose signature gets replayed here.
 */
export function poisonCatalogue(key: SigningKey, stream: string, otherStream: string, prefix: string, rng: Rng, big = true): PoisonEntry[] {
  const id = (name: string) => `${prefix}-${name}`;
  const ev = 'chaos.event';
  const good = (n: number) => JSON.stringify({ n });
  const entries: PoisonEntry[] = [];
  const add = (label: string, eventId: string, fields: Buffer[], reasons: string[]) => entries.push({ label, eventId, fields, reasons });

  add('missing-payload', id('missing-payload'), signed(key, stream, [['event', ev], ['event_id', id('missing-payload')]]), ['payload_missing']);
  add('missing-event-id', '', signed(key, stream, [['event', ev], ['payload', good(-1)]]), ['event_id_missing']);
  add('missing-signature', id('missing-signature'), plain([['event', ev], ['event_id', id('missing-signature')], ['payload', good(-1)]]), ['signature_missing']);
  // Signed over the last value of each repeated field, so only the duplicate itself is wrong.
  add('duplicate-field', id('duplicate-field'), signed(key, stream, [['event', ev], ['event_id', id('duplicate-field')], ['payload', good(-2)], ['payload', good(-1)]]), ['entry_malformed']);
  // Well-formed JSON around bytes that are not UTF-8: only the UTF-8 rule can catch it.
  const badUtf8 = Buffer.concat([Buffer.from('{"n":-1,"s":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')]);
  add('invalid-utf8', id('invalid-utf8'), signed(key, stream, [['event', ev], ['event_id', id('invalid-utf8')], ['payload', badUtf8]]), ['payload_undecodable']);
  add('binary-payload', id('binary-payload'), signed(key, stream, [['event', ev], ['event_id', id('binary-payload')], ['payload', randomBytesFrom(rng, 512)]]), ['payload_undecodable']);
  add('binary-field', id('binary-field'), plain([['event', ev], ['event_id', id('binary-field')], ['payload', good(-1)], [randomBytesFrom(rng, 16).toString('latin1'), randomBytesFrom(rng, 64)]]), ['signature_missing']);
  add('schema-invalid', id('schema-invalid'), signed(key, stream, [['event', ev], ['event_id', id('schema-invalid')], ['payload', '{"x":1}']]), ['payload_schema_invalid']);
  add('forged-signature', id('forged-signature'), plain([['event', ev], ['event_id', id('forged-signature')], ['payload', good(-1)], ['key_id', key.keyId], ['sig', randomBytes(32).toString('hex')]]), ['signature_invalid']);
  add('unknown-key-id', id('unknown-key-id'), plain([['event', ev], ['event_id', id('unknown-key-id')], ['payload', good(-1)], ['key_id', 'k-unknown'], ['sig', randomBytes(32).toString('hex')]]), ['signature_key_unknown']);
  add('replayed-from-other-stream', id('replayed'), signed(key, otherStream, [['event', ev], ['event_id', id('replayed')], ['payload', good(-1)]]), ['signature_invalid']);
  // Two poison entries sharing one event id: each needs its own record (SPEC §3.4).
  for (const n of [1, 2]) add(`reused-event-id-${n}`, id('reused'), plain([['event', ev], ['event_id', id('reused')], ['payload', good(-n)]]), ['signature_missing']);
  const wide = (count: number) => Array.from({ length: count - 3 }, (_, i): [string, string] => [`f${i}`, `v${i}`]);
  add('fields-1000', id('fields-1000'), plain([['event', ev], ['event_id', id('fields-1000')], ['payload', good(-1)], ...wide(1_000)]), ['signature_missing']);
  add('fields-4000', id('fields-4000'), plain([['event', ev], ['event_id', id('fields-4000')], ['payload', good(-1)], ...wide(4_000)]), ['signature_missing']);
  if (big) {
    const huge = Buffer.concat([Buffer.from('{"n":"'), Buffer.alloc(5 * MIB, 'x'), Buffer.from('"}')]);
    add('payload-5mib', id('payload-5mib'), signed(key, stream, [['event', ev], ['event_id', id('payload-5mib')], ['payload', huge]]), ['payload_schema_invalid']);
    add('field-5mib-unsigned', id('field-5mib'), plain([['event', ev], ['event_id', id('field-5mib')], ['payload', good(-1)], ['blob', Buffer.alloc(5 * MIB, 0xab)]]), ['signature_missing']);
  }
  return entries;
}

function randomBytesFrom(rng: Rng, n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, () => rng.int(0, 255)));
}
