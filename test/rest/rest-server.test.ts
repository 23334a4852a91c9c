/**
 * The test REST server speaks the Upstash protocol as @upstash/redis expects it: bearer
 * token, `/`, `/pipeline`, `/multi-exec`, base64 replies, errors the client parses the way
 * it parses Upstash's. Checked with raw HTTP, with the official client, and by reading Redis.
 */
import { Redis as Upstash } from '@upstash/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { fetchRestStats, REST_AUTH_ERROR } from '../../local/rest-emulator';
import { adminClient, uniquePrefix } from '../support/redis';
import { ownRestServer, type OwnRest } from './fixture';

describe('test REST server (Upstash protocol)', () => {
  let rest: OwnRest;
  let admin: Redis;
  let url: string;

  beforeAll(async () => {
    rest = await ownRestServer(inject('redisUrl'));
    url = rest.server.url;
    admin = adminClient();
  });
  afterAll(async () => {
    admin.disconnect();
    await rest.server.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const authed = (path: string, body: unknown, base64 = true) =>
    post(path, body, { authorization: `Bearer ${rest.token}`, ...(base64 ? { 'upstash-encoding': 'base64' } : {}) });
  const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
  const officialClient = (token = rest.token) =>
    new Upstash({ url, token, enableTelemetry: false, enableAutoPipelining: false, retry: { retries: 0 } });

  it.each([
    ['without a token', (): Record<string, string> => ({})],
    ['with a wrong token', () => ({ authorization: 'Bearer not-the-token' })],
    ['with the token in the wrong scheme', () => ({ authorization: `Basic ${rest.token}` })],
  ])('refuses a request %s with HTTP 401 and runs nothing', async (_, headersOf) => {
    const headers = headersOf();
    const key = `${uniquePrefix()}:k`;
    for (const [path, body] of [['/', ['SET', key, 'v']], ['/pipeline', [['SET', key, 'v']]], ['/multi-exec', [['SET', key, 'v']]]] as const) {
      const res = await post(path, body, headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: REST_AUTH_ERROR });
    }
    expect(await admin.exists(key)).toBe(0);
  });

  it('refuses a wrong token through the official client with the Upstash message', async () => {
    const key = `${uniquePrefix()}:k`;
    await expect(officialClient('wrong').set(key, 'v')).rejects.toThrow(/^WRONGPASS invalid or missing auth token, command was:/);
    expect(await admin.exists(key)).toBe(0);
  });

  it('answers a single command with base64 strings, numbers and nil, and the status OK as is', async () => {
    const key = `${uniquePrefix()}:k`;
    await admin.set(key, Buffer.from([0xff, 0x00, 0xfe, 0x41]));
    expect(await (await authed('/', ['GET', key])).json()).toEqual({ result: Buffer.from([0xff, 0x00, 0xfe, 0x41]).toString('base64') });
    expect(await (await authed('/', ['SET', `${key}:s`, 'v'])).json()).toEqual({ result: 'OK' });
    expect(await (await authed('/', ['INCR', `${key}:n`])).json()).toEqual({ result: 1 });
    expect(await (await authed('/', ['GET', `${key}:none`])).json()).toEqual({ result: null });
    expect(await (await authed('/', ['GET', `${key}:s`], false)).json()).toEqual({ result: 'v' });
  });

  it('tells the status OK from a bulk string holding OK, as Upstash does', async () => {
    const key = `${uniquePrefix()}:k`;
    const answered = async (cmds: string[][]) => ((await (await authed('/pipeline', cmds)).json()) as Array<{ result: unknown }>).map((s) => s.result);
    expect(
      await answered([
        ['SET', key, 'OK'], // status reply +OK
        ['GET', key], // bulk string "OK"
        ['PING'], // a status other than OK
        ['SET', `${key}:b`, 'T0s='], // status again; the value looks like base64
        ['GET', `${key}:b`],
        ['SET', `${key}:e`, ''],
        ['GET', `${key}:e`],
      ]),
    ).toEqual(['OK', b64('OK'), b64('PONG'), 'OK', b64('T0s='), 'OK', '']);
    // Nested strings are base64 whatever their kind, the status OK included.
    const { result } = (await (await authed('/', ['EVAL', "return {redis.status_reply('OK'), 'OK', 7}", '0'])).json()) as { result: unknown };
    expect(result).toEqual([b64('OK'), b64('OK'), 7]);
  });

  it('encodes nested arrays element by element', async () => {
    const stream = `${uniquePrefix()}:s`;
    const id = await admin.xadd(stream, '1-1', 'f', Buffer.from([0x80]));
    const { result } = (await (await authed('/', ['XRANGE', stream, '-', '+'])).json()) as { result: unknown };
    expect(result).toEqual([[b64(id!), [b64('f'), b64(Buffer.from([0x80]))]]]);
    await admin.xgroup('CREATE', stream, 'g', '0');
    const read = (await (await authed('/', ['XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '5', 'STREAMS', stream, '>'])).json()) as { result: unknown };
    expect(read.result).toEqual([[b64(stream), [[b64(id!), [b64('f'), b64(Buffer.from([0x80]))]]]]]);
  });

  it('decodes through the official client as Upstash replies do', async () => {
    const key = `${uniquePrefix()}:k`;
    const client = officialClient();
    expect(await client.set(key, 'T0s=')).toBe('OK');
    expect(await client.get(key)).toBe('T0s=');
    expect(await client.set(key, 'OK')).toBe('OK');
    expect(await client.get(key)).toBe('OK');
    expect(await client.ping()).toBe('PONG');
  });

  it('answers a Redis error with HTTP 400 {"error"} on a single command', async () => {
    const key = `${uniquePrefix()}:k`;
    await admin.set(key, 'string');
    const res = await authed('/', ['XADD', key, '*', 'f', 'v']);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/^WRONGTYPE /) });
  });

  it('runs a pipeline in order with errors in their slots, the rest still applied', async () => {
    const key = `${uniquePrefix()}:k`;
    const res = await authed('/pipeline', [['SET', key, '1'], ['XADD', key, '*', 'f', 'v'], ['INCR', key]]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ result: 'OK' }, { error: expect.stringMatching(/^WRONGTYPE /) }, { result: 2 }]);
    expect(await admin.get(key)).toBe('2');
  });

  it('reports errors the official client parses like Upstash ones', async () => {
    const key = `${uniquePrefix()}:k`;
    const client = officialClient();
    await client.set(key, 'string');
    await expect(client.xadd(key, '*', { f: 'v' })).rejects.toThrow(/^WRONGTYPE Operation against a key holding the wrong kind of value, command was: \[/);
    await expect(client.pipeline().get(key).xadd(key, '*', { f: 'v' }).exec()).rejects.toThrow(
      /^Command 2 \[ XADD \] failed: WRONGTYPE /,
    );
    const kept = await client.pipeline().get(key).xadd(key, '*', { f: 'v' }).exec({ keepErrors: true });
    expect(kept[0]).toEqual({ result: 'string', error: undefined });
    expect(kept[1]!.error).toMatch(/^WRONGTYPE /);
  });

  it('runs /multi-exec as one transaction, and refuses a transaction Redis aborts', async () => {
    const key = `${uniquePrefix()}:k`;
    expect(await officialClient().multi().set(key, 5).incr(key).exec()).toEqual(['OK', 6]);
    expect(await (await authed('/multi-exec', [['SET', `${key}:m`, '7'], ['GET', `${key}:m`], ['INCR', `${key}:m`]])).json()).toEqual([
      { result: 'OK' },
      { result: b64('7') },
      { result: 8 },
    ]);
    const aborted = await authed('/multi-exec', [['SET', key, '100'], ['NOSUCHCOMMAND', key]]);
    expect(aborted.status).toBe(400);
    expect(((await aborted.json()) as { error: string }).error).toMatch(/^EXECABORT /);
    expect(await admin.get(key)).toBe('6');
  });

  it('refuses blocking commands as Upstash does', async () => {
    const stream = `${uniquePrefix()}:s`;
    const single = await authed('/', ['XREAD', 'COUNT', '1', 'BLOCK', '10', 'STREAMS', stream, '$']);
    expect(single.status).toBe(400);
    expect(await single.json()).toEqual({ error: expect.stringMatching(/^ERR blocking commands are not supported/) });
    const piped = await authed('/pipeline', [['BLPOP', `${stream}:l`, '1'], ['XADD', stream, '*', 'BLOCK', 'STREAMS']]);
    const slots = (await piped.json()) as Array<{ error?: string; result?: unknown }>;
    expect(slots[0]!.error).toMatch(/^ERR blocking commands are not supported/);
    expect(typeof slots[1]!.result).toBe('string');
    expect(await admin.xlen(stream)).toBe(1);
  });

  it('refuses a body that is not a command with HTTP 400', async () => {
    for (const [path, body] of [['/', {}], ['/', []], ['/pipeline', ['GET', 'k']], ['/pipeline', []]] as const) {
      const res = await authed(path, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^ERR failed to parse command/);
    }
  });

  it('counts command requests by path, readable over GET /__stats with the token', async () => {
    const before = await fetchRestStats(url, rest.token);
    await authed('/', ['PING']);
    await authed('/pipeline', [['PING'], ['PING']]);
    await post('/', ['PING']);
    const after = await fetchRestStats(url, rest.token);
    expect(after.requests - before.requests).toBe(3);
    expect((after.byPath['/'] ?? 0) - (before.byPath['/'] ?? 0)).toBe(2);
    expect((after.byPath['/pipeline'] ?? 0) - (before.byPath['/pipeline'] ?? 0)).toBe(1);
    await expect(fetchRestStats(url, 'wrong')).rejects.toThrow(/HTTP 401/);
  });
});
