/**
 * Binary safety over REST (SPEC §10). Reads are byte-exact: the port asks for base64
 * replies and decodes them to bytes itself. Writes travel as JSON strings, so only UTF-8
 * survives them exactly: UTF-8 round-trips byte-for-byte, anything else is refused before
 * a request is sent — by the port, and by `assertFieldsFitTransport` at publish, naming
 * the field.
 */
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { command, type RedisPort } from '../../src/redis/port';
import { asArray } from '../../src/redis/reply';
import { runCommand } from '../../src/redis/script';
import { connectUpstash } from '../../src/redis/upstash-port';
import { isWellFormedUtf8 } from '../../src/ground/text';
import { assertFieldsFitTransport, RestPayloadNotUtf8Error } from '../../src/redis/utf8';
import { adminClient, uniquePrefix } from '../support/redis';
import { ownRestServer, type OwnRest } from './fixture';

const NOT_UTF8 = new Uint8Array([0x7b, 0xff, 0x00, 0xc3, 0x28, 0x7d]);
/** A leading BOM, NUL, a 4-byte emoji: valid UTF-8 a careless decoder would still alter. */
const TRICKY_UTF8 = new Uint8Array([0xef, 0xbb, 0xbf, 0x00, 0x7b, 0xf0, 0x9f, 0x98, 0x80, 0x7d]);

describe('binary safety over REST', () => {
  let rest: OwnRest;
  let admin: Redis;
  let port: RedisPort;

  beforeAll(async () => {
    rest = await ownRestServer(inject('redisUrl'));
    admin = adminClient();
    port = connectUpstash({ url: rest.server.url, token: rest.token });
  });
  afterAll(async () => {
    admin.disconnect();
    await rest.server.close();
  });

  /** The payload field of the only entry, read over REST. */
  async function payloadOverRest(stream: string): Promise<Uint8Array> {
    const [entry] = asArray(await runCommand(port, command('XRANGE', stream, '-', '+')), 'entries');
    const fields = asArray(asArray(entry, 'entry')[1], 'fields');
    return fields[1] as Uint8Array;
  }

  it('reads any bytes exactly, however they were written', async () => {
    const every = new Uint8Array(256).map((_, i) => i);
    for (const value of [every, NOT_UTF8, TRICKY_UTF8]) {
      const stream = `${uniquePrefix()}:s`;
      await admin.xadd(stream, '*', 'payload', Buffer.from(value));
      expect(await payloadOverRest(stream)).toEqual(value);
    }
  });

  it('reads arbitrary bytes exactly (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (value) => {
        const key = `${uniquePrefix()}:k`;
        await admin.set(key, Buffer.from(value));
        expect(await runCommand(port, command('GET', key))).toEqual(value);
      }),
      { numRuns: 40 },
    );
  });

  it('writes UTF-8 byte-for-byte, BOM and NUL included (property)', async () => {
    const stream = `${uniquePrefix()}:s`;
    await runCommand(port, command('XADD', stream, '*', 'payload', TRICKY_UTF8));
    expect(new Uint8Array((await admin.xrangeBuffer(stream, '-', '+'))[0]![1][1]!)).toEqual(TRICKY_UTF8);
    expect(await payloadOverRest(stream)).toEqual(TRICKY_UTF8);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 100 }), async (text) => {
        const value = new TextEncoder().encode(text);
        const key = `${uniquePrefix()}:k`;
        await runCommand(port, command('SET', key, value));
        expect(new Uint8Array(await admin.getBuffer(key) ?? [])).toEqual(value);
      }),
      { numRuns: 40 },
    );
  });

  it('refuses to write non-UTF-8 bytes, naming the argument, before sending anything', async () => {
    const stream = `${uniquePrefix()}:s`;
    rest.requestsSince();
    const error = await port.exchange([command('XADD', stream, '*', 'payload', NOT_UTF8)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestPayloadNotUtf8Error);
    expect(error).toMatchObject({ code: 'REST_PAYLOAD_NOT_UTF8', field: 'argument 4 of XADD' });
    expect(rest.requestsSince()).toBe(0);
    expect(await admin.exists(stream)).toBe(0);
  });

  it('refuses a non-UTF-8 field at publish on REST, naming the field; TCP carries it', () => {
    const fields: Array<[string, string | Uint8Array]> = [['event', 'order.placed'], ['event_id', 'e1'], ['payload', NOT_UTF8]];
    expect(() => assertFieldsFitTransport('rest', fields)).toThrow(RestPayloadNotUtf8Error);
    expect(() => assertFieldsFitTransport('rest', fields)).toThrow(/^field "payload" is not valid UTF-8/);
    expect(() => assertFieldsFitTransport('tcp', fields)).not.toThrow();
    expect(() => assertFieldsFitTransport('rest', [['payload', TRICKY_UTF8], ['event', 'x']])).not.toThrow();
  });

  it('tells well-formed UTF-8 apart', () => {
    expect(isWellFormedUtf8(TRICKY_UTF8)).toBe(true);
    expect(isWellFormedUtf8(NOT_UTF8)).toBe(false);
    // Overlong encoding and an encoded surrogate are not UTF-8 either.
    expect(isWellFormedUtf8(new Uint8Array([0xc0, 0xaf]))).toBe(false);
    expect(isWellFormedUtf8(new Uint8Array([0xed, 0xa0, 0x80]))).toBe(false);
  });
});
