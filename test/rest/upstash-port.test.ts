/**
 * The REST port against real Redis through the test REST server, on a private
 * redis-server (SCRIPT FLUSH here must not disturb other suites) and a REST server of
 * this file's own (so every HTTP request counted here is ours).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisProcess } from '../../local/redis-server';
import { errorCode, RedisCommandError } from '../../src/ground/errors';
import { createPoller, type Poller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { command, type RedisPort } from '../../src/redis/port';
import { decodeText } from '../../src/ground/text';
import { runCommand, runOperations } from '../../src/redis/script';
import { connectUpstash, decodeRestReply } from '../../src/redis/upstash-port';
import { Rejection } from '../../src/verdict/verdict';
import { uniquePrefix } from '../support/redis';
import { ownRestServer, type OwnRest } from './fixture';

const bytes = (text: string) => new TextEncoder().encode(text);
/** Buffers (ioredis) and Uint8Arrays (REST) compared by content. */
const comparable = (reply: unknown): unknown =>
  reply instanceof Uint8Array ? `bytes:${Buffer.from(reply).toString('hex')}` : Array.isArray(reply) ? reply.map(comparable) : reply;

describe('upstash port', () => {
  let redis: RedisProcess;
  let admin: Redis;
  let rest: OwnRest;
  let port: RedisPort;
  let tcp: RedisPort;

  beforeAll(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url);
    rest = await ownRestServer(redis.url);
    port = connectUpstash({ url: rest.server.url, token: rest.token });
    tcp = connectIoredis(redis.url);
  });
  afterAll(async () => {
    await tcp.close();
    await port.close();
    await rest.server.close();
    admin.disconnect();
    await redis.stop();
  });
  beforeEach(() => {
    rest.requestsSince();
  });

  it('is a REST, non-cluster port', () => {
    expect(port.transport).toBe('rest');
    expect(port.cluster).toBe(false);
  });

  it('replies exactly as the TCP port does: bytes, integers, nil, nested arrays, status', async () => {
    // The same commands on two fresh key sets, one per client.
    const commandsOn = async (k: string) => {
      await admin.xadd(`${k}:s`, '1-1', 'f', 'v', 'n', '7');
      return [
        command('SET', `${k}:a`, '123'),
        command('GET', `${k}:a`),
        command('INCR', `${k}:n`),
        command('GET', `${k}:none`),
        command('XRANGE', `${k}:s`, '-', '+'),
        command('EVAL', "return {'123', 45, false, {'x'}}", 0),
        command('PING'),
        command('SET', `${k}:empty`, ''),
        command('GET', `${k}:empty`),
        // Values that look like base64 or like the status OK are just bytes.
        command('SET', `${k}:ok`, 'OK'),
        command('GET', `${k}:ok`),
        command('SET', `${k}:b64`, 'T0s='),
        command('GET', `${k}:b64`),
        command('SET', `${k}:abcd`, 'abcd'),
        command('MGET', `${k}:abcd`, `${k}:none`, `${k}:ok`),
        command('EVAL', "return {redis.status_reply('OK'), 'OK', {redis.status_reply('PONG')}}", 0),
        command('XGROUP', 'CREATE', `${k}:s`, 'g', '0'),
        command('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', `${k}:s`, '>'),
      ];
    };
    const restKeys = uniquePrefix();
    const overRest = await port.exchange(await commandsOn(restKeys));
    const overTcp = await tcp.exchange(await commandsOn(uniquePrefix()));
    // All but the XREADGROUP reply, which names each side's own stream.
    expect(comparable(overRest.slice(0, -1))).toEqual(comparable(overTcp.slice(0, -1)));
    // Automatic deserialization is off: a Lua "123" stays bytes, as over TCP.
    expect(overRest[1]).toEqual(bytes('123'));
    expect(overRest[2]).toBe(1);
    expect(overRest[3]).toBeNull();
    expect(overRest[5]).toEqual([bytes('123'), 45, null, [bytes('x')]]);
    expect(overRest.slice(9, 15)).toEqual([bytes('OK'), bytes('OK'), bytes('OK'), bytes('T0s='), bytes('OK'), [bytes('abcd'), null, bytes('OK')]]);
    expect(overRest[15]).toEqual([bytes('OK'), bytes('OK'), [bytes('PONG')]]);
    expect(overRest[17]).toEqual([[bytes(`${restKeys}:s`), [[bytes('1-1'), [bytes('f'), bytes('v'), bytes('n'), bytes('7')]]]]]);
  });

  it('sends one HTTP request per exchange, always to /pipeline (where refusals come back in their slot)', async () => {
    const before = rest.server.stats().byPath;
    await port.exchange([command('PING')]);
    expect(rest.requestsSince()).toBe(1);
    await port.exchange([command('PING'), command('PING'), command('PING')]);
    expect(rest.requestsSince()).toBe(1);
    await port.exchange([]);
    expect(rest.requestsSince()).toBe(0);
    const after = rest.server.stats().byPath;
    expect((after['/'] ?? 0) - (before['/'] ?? 0)).toBe(0);
    expect((after['/pipeline'] ?? 0) - (before['/pipeline'] ?? 0)).toBe(2);
  });

  it('surfaces WRONGTYPE as a typed error with the command name and without the token', async () => {
    const key = `${uniquePrefix()}:k`;
    await admin.set(key, 'string');
    const thrown = await runCommand(port, command('XADD', key, '*', 'f', 'v')).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(RedisCommandError);
    const error = thrown as RedisCommandError;
    expect(errorCode(error)).toBe('REDIS_COMMAND_FAILED');
    expect(error.command).toBe('XADD');
    expect(error.replyCode).toBe('WRONGTYPE');
    expect(error.reply).toBe('WRONGTYPE Operation against a key holding the wrong kind of value');
    for (const rendering of [error.message, String(error), JSON.stringify(error), inspect(error, { depth: 10 })]) {
      expect(rendering).not.toContain(rest.token);
    }
    expect(inspect(port, { depth: 10 })).not.toContain(rest.token);
    expect(JSON.stringify(port)).not.toContain(rest.token);
  });

  it('puts an error reply in its pipeline slot and still applies the other commands', async () => {
    const key = `${uniquePrefix()}:k`;
    const replies = await port.exchange([command('SET', key, '1'), command('XADD', key, '*', 'f', 'v'), command('INCR', key)]);
    expect(replies[0]).toEqual(bytes('OK'));
    expect(replies[1]).toBeInstanceOf(RedisCommandError);
    expect((replies[1] as RedisCommandError).command).toBe('XADD');
    expect((replies[1] as RedisCommandError).replyCode).toBe('WRONGTYPE');
    expect(replies[2]).toBe(2);
    await expect(runOperations(port, [command('GET', key), command('LPUSH', key, 'x')])).rejects.toMatchObject({
      code: 'REDIS_COMMAND_FAILED',
      command: 'LPUSH',
    });
  });

  it('refuses a blocking command before sending anything', async () => {
    const stream = `${uniquePrefix()}:s`;
    for (const cmd of [
      command('XREAD', 'COUNT', 1, 'BLOCK', 100, 'STREAMS', stream, '$'),
      command('XREADGROUP', 'GROUP', 'g', 'c', 'block', 100, 'STREAMS', stream, '>'),
      command('BLPOP', `${stream}:l`, 1),
    ]) {
      await expect(port.exchange([command('PING'), cmd])).rejects.toMatchObject({
        code: 'REST_BLOCKING_UNSUPPORTED',
        command: cmd.name,
        message: expect.stringContaining('cannot run blocking commands'),
      });
    }
    expect(rest.requestsSince()).toBe(0);
    // BLOCK as data (after STREAMS, or in an XADD) is not an option and goes through.
    await port.exchange([command('XADD', stream, '*', 'BLOCK', 'BLOCK'), command('XREAD', 'COUNT', 1, 'STREAMS', stream, '0-0')]);
    expect(await admin.xlen(stream)).toBe(1);
  });

  it('reports a refused token as Redis unavailable, without the token', async () => {
    const wrong = 'wrong-token-value';
    const bad = connectUpstash({ url: rest.server.url, token: wrong });
    for (const cmds of [[command('PING')], [command('PING'), command('PING')]]) {
      const error = await bad.exchange(cmds).catch((e: unknown) => e);
      expect(errorCode(error)).toBe('REDIS_UNAVAILABLE');
      expect((error as Error).message).toMatch(/refused the token \(HTTP 401: WRONGPASS/);
      expect(inspect(error, { depth: 10 })).not.toContain(wrong);
    }
  });

  it('reports a network failure as Redis unavailable after exactly one attempt', async () => {
    let attempts = 0;
    const dropper = createServer((req) => {
      attempts += 1;
      req.socket.destroy();
    });
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}`;
      const flaky = connectUpstash({ url, token: rest.token });
      for (const cmds of [[command('PING')], [command('PING'), command('PING')]]) {
        attempts = 0;
        await expect(flaky.exchange(cmds)).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
        expect(attempts).toBe(1);
      }
    } finally {
      dropper.closeAllConnections();
      await new Promise<void>((resolve) => dropper.close(() => resolve()));
    }
  });

  it.each([429, 500, 503])('reports an HTTP %i with a Redis-looking error body as unavailable, never as a command error', async (status) => {
    const limiter = createServer((_, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'ERR max requests limit exceeded' }));
    });
    await new Promise<void>((resolve) => limiter.listen(0, '127.0.0.1', resolve));
    try {
      const limited = connectUpstash({ url: `http://127.0.0.1:${(limiter.address() as AddressInfo).port}`, token: rest.token });
      for (const cmds of [[command('PING')], [command('PING'), command('PING')]]) {
        await expect(limited.exchange(cmds)).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
      }
    } finally {
      limiter.closeAllConnections();
      await new Promise<void>((resolve) => limiter.close(() => resolve()));
    }
  });

  it('gives up on a request that gets no answer', async () => {
    const silent = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const stalled = connectUpstash({ url, token: rest.token, exchangeTimeoutMs: 200 });
      await expect(stalled.exchange([command('PING')])).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('rejects a missing URL or token at construction, naming the field only', () => {
    expect(() => connectUpstash({ url: '', token: '' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    const error = (() => {
      try {
        connectUpstash({ url: 'not a url', token: 'secret value' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/url: must be an http\(s\) URL/);
    expect(error?.message).toMatch(/token: must be a non-empty token without whitespace/);
    expect(error?.message).not.toContain('secret value');
  });

  it('decodes by the exact rule: a result "OK" is the status, every other string is base64', () => {
    expect(decodeRestReply('OK')).toEqual(bytes('OK')); // the status reply, sent as is
    expect(decodeRestReply('T0s=')).toEqual(bytes('OK')); // a bulk string holding OK
    expect(decodeRestReply('abcd')).toEqual(new Uint8Array([0x69, 0xb7, 0x1d])); // base64, whatever it looks like
    expect(decodeRestReply('')).toEqual(new Uint8Array());
    expect(decodeRestReply(['/w==', 3, null, ['']])).toEqual([new Uint8Array([0xff]), 3, null, [new Uint8Array()]]);
    const unexpected = expect.objectContaining({ code: 'REDIS_REPLY_UNEXPECTED' });
    // Not base64 and not the OK status: a protocol violation, not text to take as is.
    for (const raw of ['hello world', 'OK!', 'T0s', 'T0s=\n', ['OK'], [['OK']], 1.5, {}, { error: 'ERR nested' }, true]) {
      expect(() => decodeRestReply(raw)).toThrow(unexpected);
    }
  });

  it('sends the documented request: POST /pipeline, bearer token, base64 encoding, read-your-writes token', async () => {
    const seen: Array<{ method?: string; url?: string; headers: Record<string, unknown>; body: string }> = [];
    const capture = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json', 'upstash-sync-token': `sync-${seen.length}` });
        res.end(JSON.stringify([{ result: 'OK' }, { result: 'UE9ORw==' }]));
      });
    });
    await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
    try {
      const captured = connectUpstash({ url: `http://127.0.0.1:${(capture.address() as AddressInfo).port}/`, token: 'tok-123' });
      expect(await captured.exchange([command('SET', 'k', 7), command('PING')])).toEqual([bytes('OK'), bytes('PONG')]);
      await captured.exchange([command('SET', 'k', 'ü'), command('PING')]);
      expect(seen[0]).toMatchObject({ method: 'POST', url: '/pipeline', body: JSON.stringify([['SET', 'k', '7'], ['PING']]) });
      expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer tok-123', 'upstash-encoding': 'base64', 'content-type': 'application/json' });
      expect(seen[0]!.headers).not.toHaveProperty('upstash-sync-token');
      expect(seen[1]!.headers).toMatchObject({ 'upstash-sync-token': 'sync-1' });
      expect(JSON.parse(seen[1]!.body)).toEqual([['SET', 'k', 'ü'], ['PING']]);
    } finally {
      capture.closeAllConnections();
      await new Promise<void>((resolve) => capture.close(() => resolve()));
    }
  });

  it('types refusals by HTTP status, not by the text of the error body', async () => {
    let answer: { status: number; body: string } = { status: 200, body: '' };
    const server = createServer((_, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = connectUpstash({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: rest.token });
      const failure = async (status: number, body: string) => {
        answer = { status, body };
        return (await client.exchange([command('PING')]).catch((e: unknown) => e)) as Error & { code?: string };
      };
      // A 500 whose text reads like an auth error is an outage, not a refused token...
      const outage = await failure(500, JSON.stringify({ error: 'WRONGPASS invalid or missing auth token' }));
      expect(outage.code).toBe('REDIS_UNAVAILABLE');
      expect(outage.message).not.toMatch(/refused the token/);
      // ...and a 401 is a refused token whatever its body says.
      for (const body of [JSON.stringify({ error: 'Unauthorized' }), '<html>nope</html>']) {
        const refused = await failure(401, body);
        expect(refused.code).toBe('REDIS_UNAVAILABLE');
        expect(refused.message).toMatch(/refused the token \(HTTP 401/);
      }
      expect((await failure(200, 'not json')).code).toBe('REDIS_REPLY_UNEXPECTED');
      expect((await failure(200, JSON.stringify([{ result: 'OK' }, { result: 'OK' }]))).code).toBe('REDIS_REPLY_UNEXPECTED');
      expect((await failure(200, JSON.stringify([{ result: 'plain text' }]))).code).toBe('REDIS_REPLY_UNEXPECTED');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('gives up on an answer whose body stalls', async () => {
    const stalling = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"result":');
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
      const started = Date.now();
      const error = await connectUpstash({ url, token: rest.token, exchangeTimeoutMs: 200 })
        .exchange([command('PING')])
        .catch((e: unknown) => e as Error & { code?: string });
      expect(error).toMatchObject({ code: 'REDIS_UNAVAILABLE', message: expect.stringMatching(/no answer within 200 ms/) });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      stalling.closeAllConnections();
      await new Promise<void>((resolve) => stalling.close(() => resolve()));
    }
  });

  describe('rounds over REST', () => {
    let stream: string;
    let seen: string[];
    let poller: Poller;

    beforeEach(async () => {
      stream = `${uniquePrefix()}:orders`;
      seen = [];
      poller = createPoller({
        port,
        config: { stream, group: 'g', consumer: 'c1', handlerTimeoutMs: 1_000, runBudgetMs: 5_000, minIdleMs: 10_000, settleReserveMs: 50 },
        process: createProcessor(rawPayload, ({ payload }) => {
          const text = decodeText(payload);
          seen.push(text);
          if (text === 'bad') throw new Rejection('order_unknown');
          return 'committed';
        }),
      });
      await poller.ensureGroup();
    });

    const append = (eventId: string, payload: string) => admin.xadd(stream, '*', 'event_id', eventId, 'payload', payload);
    const pending = async () => (await admin.xpending(stream, 'g'))[0];

    it('costs exactly 2 HTTP requests per round, whatever the batch size', async () => {
      await append('warm', 'warm-up');
      await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 }); // loads both scripts
      for (const size of [1, 50]) {
        for (let i = 0; i < size; i += 1) await append(`e${size}-${i}`, i === 0 ? 'bad' : `p${i}`);
        rest.requestsSince();
        const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
        expect(rest.requestsSince()).toBe(2);
        expect(report.roundTrips).toBe(2);
        expect(report.handled).toBe(size);
      }
      expect(await pending()).toBe(0);
      expect(await admin.xlen(poller.config.keys.dlt)).toBe(2);
    });

    it('keeps working after SCRIPT FLUSH: each script costs one more request, once', async () => {
      for (const round of [1, 2]) {
        await admin.script('FLUSH');
        await append(`e${round}`, `p${round}`);
        rest.requestsSince();
        const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
        // claim pipeline + EVAL after its NOSCRIPT; settle EVALSHA + EVAL after its NOSCRIPT
        expect(rest.requestsSince()).toBe(4);
        expect(report.acked).toBe(1);
      }
      await append('e3', 'p3');
      await poller.run({ mode: 'drain', deadline: Date.now() + 5_000, maxRounds: 1 });
      expect(rest.requestsSince()).toBe(2);
      expect(seen).toEqual(['p1', 'p2', 'p3']);
      expect(await pending()).toBe(0);
    });

    it('runs continuous mode without a blocking command: it sleeps between empty rounds', async () => {
      // A blocking wait would reject the run (the port refuses it with REST_BLOCKING_UNSUPPORTED).
      const report = await poller.run({ mode: 'continuous', deadline: Date.now() + 400 });
      expect(report.stoppedForDeadline).toBe(true);
      expect(rest.requestsSince()).toBeGreaterThan(0);
    });
  });
});
