/**
 * The ioredis port's exchange of several commands on a standalone connection (issued one by
 * one in a tick, corked, since 2026-12-06; an ioredis Pipeline before): every command is
 * answered in its own slot and in order, a refusal is a RedisCommandError in its slot that
 * leaves the others alone, a transaction's failed command is one inside EXEC's reply, and
 * commands sent while the connection is still opening go out in order once it is open.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RedisProcess } from '../../local/redis-server';
import { RedisCommandError } from '../../src/ground/errors';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { command, type RedisPort, type RedisReply } from '../../src/redis/port';
import { replyText as text } from '../support/redis';
import { usePrivateRedis } from '../support/redis-suite';

describe('ioredis port: an exchange of several commands (standalone)', () => {
  let server: RedisProcess;
  let port: RedisPort;
  let tests = 0;
  let key: string;

  usePrivateRedis((h) => ({ server } = h));
  beforeEach(() => {
    port = connectIoredis(server.url);
    key = `exchange:${(tests += 1)}`;
  });
  afterEach(async () => {
    await port.close();
  });

  it('answers every command in its slot, in order; a refused one is an error there and the rest stand', async () => {
    const replies = await port.exchange([
      command('SET', key, 'v1'),
      command('LPUSH', key, 'x'),
      command('APPEND', key, '-2'),
      command('GET', key),
    ]);
    expect(text(replies[0]!)).toBe('OK');
    expect(replies[1]).toBeInstanceOf(RedisCommandError);
    expect((replies[1] as RedisCommandError).message).toMatch(/WRONGTYPE/);
    expect(replies[2]).toBe(4);
    expect(text(replies[3]!)).toBe('v1-2');
  });

  it('hands back a transaction\'s reply with the command that failed inside EXEC as an error in its slot', async () => {
    const replies = await port.exchange([
      command('MULTI'),
      command('SET', key, 'not a number'),
      command('INCR', key),
      command('GET', key),
      command('EXEC'),
    ]);
    const exec = replies[4] as Array<RedisReply | RedisCommandError>;
    expect(text(exec[0]!)).toBe('OK');
    expect(exec[1]).toBeInstanceOf(RedisCommandError);
    expect((exec[1] as RedisCommandError).message).toMatch(/not an integer/);
    expect(text(exec[2]!)).toBe('not a number');
  });

  it('keeps the order of many exchanges sent at once, the first while the connection is still opening', async () => {
    const fresh = connectIoredis(server.url);
    try {
      const sent = Array.from({ length: 50 }, (_, i) => fresh.exchange([command('RPUSH', key, String(i)), command('LLEN', key)]));
      const lengths = (await Promise.all(sent)).map((replies) => replies[1]);
      expect(lengths).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      // The connection is not left corked: a single command after them is answered.
      expect(await fresh.exchange([command('LLEN', key)])).toEqual([50]);
    } finally {
      await fresh.close();
    }
  });
});
