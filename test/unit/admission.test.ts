/**
 * Origin admission with HMAC engines other than the two built in: whatever shape an
 * engine's answer takes, only an explicit `true` for the right bytes admits an entry, and
 * an engine that reads its message late is never handed a buffer that changes under it.
 */
import { describe, expect, it } from 'vitest';
import { MIN_KEY_BYTES } from '../../src/auth/modes';
import { webCryptoHmac, type HmacEngine } from '../../src/auth/hmac';
import { SecretKey } from '../../src/auth/secret';
import { signEntry } from '../../src/auth/signature';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import type { DeliveryContext } from '../../src/consume/decide';
import type { StreamEntry } from '../../src/entry/entry';
import { nodeHmac } from '../../src/node/crypto';
import { rawPayload } from '../../src/consume/processor';
import type { Verdict } from '../../src/verdict/verdict';

const STREAM = 'orders';
const KEY = SecretKey.from('k'.repeat(MIN_KEY_BYTES));
const utf8 = new TextEncoder();
const context: DeliveryContext = { deadline: Date.now() + 60_000, signal: new AbortController().signal };

async function signedEntry(id: string, payload: string, tamper = false): Promise<StreamEntry> {
  const eventId = `ev-${id}`;
  const sig = await signEntry(KEY, { stream: STREAM, eventId, eventType: 'order.placed', payload });
  const fields: Array<[string, Uint8Array]> = [
    ['event', utf8.encode('order.placed')],
    ['event_id', utf8.encode(eventId)],
    ['payload', utf8.encode(tamper ? `${payload}!` : payload)],
    ['key_id', utf8.encode('k1')],
    ['sig', utf8.encode(sig)],
  ];
  return { id, fields: new Map(fields), deliveries: 1, reclaimed: false };
}

function processorSeeing(handled: string[], hmac: HmacEngine) {
  return createSignedProcessor({
    stream: STREAM,
    hmac,
    auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'shop' },
    decode: rawPayload,
    handler: (delivery) => {
      handled.push(delivery.entry.id);
      return 'committed';
    },
  });
}

const kinds = (verdicts: Verdict[]) => verdicts.map((v) => (v.kind === 'dead-letter' ? `dead-letter:${v.reason}` : v.kind));

describe('admission with custom HMAC engines', () => {
  it('treats a thenable answer as pending, never as a verdict: valid entries pass, forged ones are dead-lettered', async () => {
    const inner = webCryptoHmac;
    // Not a native Promise (another realm, another library): `instanceof Promise` is false.
    const thenable = <T>(work: () => Promise<T>): PromiseLike<T> => ({ then: (ok, fail) => work().then(ok, fail) });
    const engine: HmacEngine = { name: 'thenable', mac: (k, m) => inner.mac(k, m), verify: (k, m, e) => thenable(async () => inner.verify(k, m, e)) as unknown as Promise<boolean> };
    const entries = [await signedEntry('1-0', '{"a":1}'), await signedEntry('2-0', '{"a":2}', true)];
    const handled: string[] = [];
    const process = processorSeeing(handled, engine);
    const verdicts = await Promise.all(entries.map((entry) => process(entry, context)));
    expect(kinds(verdicts)).toEqual(['ack', 'dead-letter:signature_invalid']);
    expect(handled).toEqual(['1-0']);
  });

  it('admits only an explicit true: a truthy non-boolean answer is a failed signature', async () => {
    const engine: HmacEngine = { name: 'truthy', mac: (k, m) => webCryptoHmac.mac(k, m), verify: () => 'yes' as unknown as boolean };
    const handled: string[] = [];
    const verdict = await processorSeeing(handled, engine)(await signedEntry('1-0', '{"a":1}', true), context);
    expect(kinds([verdict])).toEqual(['dead-letter:signature_invalid']);
    expect(handled).toEqual([]);
  });

  it('gives an engine that reads its message after an await a message of its own', async () => {
    const lateReader: HmacEngine = {
      name: 'late-reader',
      mac: (k, m) => webCryptoHmac.mac(k, m),
      async verify(k, message, expected) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return webCryptoHmac.verify(k, message, expected);
      },
    };
    expect(lateReader.synchronous).toBeUndefined();
    // Payloads of different lengths, all verified at once through one processor (one
    // verifier, one encoder): a shared buffer would be overwritten before any was read.
    const entries = await Promise.all(['{"a":1}', '{"bb":22}', '{"ccc":333}', '{}'].map((p, i) => signedEntry(`${i + 1}-0`, p, i === 3)));
    const handled: string[] = [];
    const process = processorSeeing(handled, lateReader);
    const verdicts = await Promise.all(entries.map((entry) => process(entry, context)));
    expect(kinds(verdicts)).toEqual(['ack', 'ack', 'ack', 'dead-letter:signature_invalid']);
    expect(handled.sort()).toEqual(['1-0', '2-0', '3-0']);
  });
});

describe('key ids', () => {
  const withField = async (name: string, bytes: Uint8Array) => {
    const entry = await signedEntry('1-0', '{"a":1}');
    return { ...entry, fields: new Map([...entry.fields, [name, bytes]]) };
  };

  it('must spell a trusted key id byte for byte: a BOM or a malformed byte is not dropped to make them match', async () => {
    const keyIds = [
      utf8.encode('k1'),
      Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8.encode('k1')]),
      Uint8Array.from([...utf8.encode('k1'), 0xff]),
      utf8.encode('k2'),
      utf8.encode('k1 '),
      utf8.encode('K1'),
      new Uint8Array(0),
    ];
    for (const hmac of [nodeHmac, webCryptoHmac]) {
      const process = processorSeeing([], hmac);
      const verdicts = await Promise.all(keyIds.map(async (keyId) => process(await withField('key_id', keyId), context)));
      expect(kinds(verdicts)).toEqual(['ack', ...Array(6).fill('dead-letter:signature_key_unknown')]);
    }
  });

  it('in a keyring too', async () => {
    const process = createSignedProcessor({
      stream: STREAM,
      auth: { mode: 'hmac-keyring', keys: { k1: { producer: 'shop', key: KEY } } },
      decode: rawPayload,
      handler: () => 'committed',
    });
    const bom = Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8.encode('k1')]);
    const verdicts = await Promise.all([utf8.encode('k1'), bom].map(async (keyId) => process(await withField('key_id', keyId), context)));
    expect(kinds(verdicts)).toEqual(['ack', 'dead-letter:signature_key_unknown']);
  });

  it('and a signature with a BOM before its hex is not the signature', async () => {
    const entry = await signedEntry('1-0', '{"a":1}');
    const sig = entry.fields.get('sig')!;
    for (const hmac of [nodeHmac, webCryptoHmac]) {
      const process = processorSeeing([], hmac);
      const verdict = await process(await withField('sig', Uint8Array.from([0xef, 0xbb, 0xbf, ...sig])), context);
      expect(kinds([verdict])).toEqual(['dead-letter:signature_invalid']);
    }
  });
});

describe('field names and event ids (SPEC §3.4 exact bytes)', () => {
  it('dead-letters an entry with a field name that is not UTF-8 as entry_malformed, before its origin is checked', async () => {
    const signed = await signedEntry('1-0', '{"a":1}');
    const handled: string[] = [];
    const process = processorSeeing(handled, nodeHmac);
    const malformed = { ...signed, fields: new Map([...signed.fields, ['\udcff', utf8.encode('x')]]), fieldNameNotUtf8: true };
    const unsigned = { ...malformed, fields: new Map([...malformed.fields].filter(([name]) => name !== 'sig')) };
    expect(kinds([await process(malformed, context), await process(unsigned, context)])).toEqual(['dead-letter:entry_malformed', 'dead-letter:entry_malformed']);
    expect(handled).toEqual([]);
  });

  it('dead-letters a correctly signed event id with a BOM as event_id_invalid', async () => {
    const eventId = '\ufeffev-1-0';
    const payload = '{"a":1}';
    const sig = await signEntry(KEY, { stream: STREAM, eventId, eventType: 'order.placed', payload });
    const fields = new Map([
      ['event', utf8.encode('order.placed')],
      ['event_id', utf8.encode(eventId)],
      ['payload', utf8.encode(payload)],
      ['key_id', utf8.encode('k1')],
      ['sig', utf8.encode(sig)],
    ]);
    const handled: string[] = [];
    const verdict = await processorSeeing(handled, nodeHmac)({ id: '1-0', fields, deliveries: 1, reclaimed: false }, context);
    expect(kinds([verdict])).toEqual(['dead-letter:event_id_invalid']);
    expect(handled).toEqual([]);
  });
});
