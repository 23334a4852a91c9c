/**
 * The ioredis port's exchange on a Cluster (since 2026-12-07): sent one by one to the master
 * that serves its slot, without an ioredis Pipeline; when that master refuses every command
 * as not its own (the slot moved: a failover, a resharding), nothing ran, and the exchange goes
 * again through a Pipeline, which follows the redirection — each command runs once. When some
 * ran before the refusal, the answers stand as they are: nothing runs twice.
 */
import { Cluster, Command } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { RedisCommandError } from '../../src/ground/errors';
import { ioredisPort } from '../../src/redis/ioredis-port';
import { command, type RedisPort } from '../../src/redis/port';
import { replyText as text, uniquePrefix } from '../support/redis';

const slotOf = (key: string) => new Command('GET', [key]).getSlot();

describe('ioredis port: an exchange on a Cluster', () => {
  let client: Cluster;
  let port: RedisPort;
  let tag: string;

  beforeEach(async () => {
    client = new Cluster(inject('clusterNodes'));
    port = ioredisPort(client);
    tag = uniquePrefix();
    // The slot map is read once the Cluster is ready; its masters' connections open on first
    // use (the port sends an exchange straight to a master only once its connection is ready).
    await client.set(`{${tag}}:warm`, '1');
    await Promise.all(client.nodes('master').map((node) => node.ping()));
  });
  afterEach(() => client.disconnect());

  /** The node key (host:port) of a master that does not serve `key`'s slot. */
  const otherMaster = (key: string) => {
    const owner = client.slots[slotOf(key)]![0];
    return client.nodes('master').map((node) => `${node.options.host}:${node.options.port}`).find((node) => node !== owner)!;
  };

  it('sends a transaction and the commands around it to the slot’s master, without a Pipeline, answered in order', async () => {
    const pipeline = vi.spyOn(client, 'pipeline');
    const replies = await port.exchange([
      command('MULTI'),
      command('INCR', `{${tag}}:a`),
      command('INCR', `{${tag}}:b`),
      command('EXEC'),
      command('GET', `{${tag}}:a`),
    ]);
    expect(text(replies[0])).toBe('OK');
    expect(replies[3]).toEqual([1, 1]);
    expect(text(replies[4])).toBe('1');
    expect(pipeline).not.toHaveBeenCalled();
  });

  it('goes again through a Pipeline when the master it chose refused every command as not its own, and runs each once', async () => {
    const key = `{${tag}}:a`;
    // A slot map that points elsewhere, as after a failover the client has not heard of yet.
    client.slots[slotOf(key)] = [otherMaster(key)];
    const pipeline = vi.spyOn(client, 'pipeline');
    const replies = await port.exchange([command('MULTI'), command('INCR', key), command('EXEC'), command('INCR', `{${tag}}:b`)]);
    expect(replies[2]).toEqual([1]);
    expect(replies[3]).toBe(1);
    expect(pipeline).toHaveBeenCalledTimes(1);
    expect(await client.get(key)).toBe('1');
    expect(await client.get(`{${tag}}:b`)).toBe('1');
  });

  it('answers a transaction discarded for a refusal of its own (no redirection) as it is, without the Pipeline', async () => {
    const pipeline = vi.spyOn(client, 'pipeline');
    // SET with no value is refused when queued: EXEC discards the transaction (EXECABORT).
    const replies = await port.exchange([command('MULTI'), command('SET', `{${tag}}:a`, '1'), command('SET', `{${tag}}:b`), command('EXEC')]);
    expect(replies[2]).toBeInstanceOf(RedisCommandError);
    expect((replies[3] as RedisCommandError).message).toMatch(/EXECABORT/);
    expect(pipeline).not.toHaveBeenCalled();
    expect(await client.get(`{${tag}}:a`)).toBeNull();
  });

  it('answers as it is when some commands ran before the refusal: the refused ones fail, nothing runs twice', async () => {
    // A second key whose slot another master serves: what the exchange sends after the first
    // command meets a master that is not its own, as when the slot moves in between.
    let other = `{${tag}-2}:b`;
    for (let i = 3; client.slots[slotOf(other)]![0] === client.slots[slotOf(`{${tag}}:a`)]![0]; i += 1) other = `{${tag}-${i}}:b`;
    const pipeline = vi.spyOn(client, 'pipeline');
    const replies = await port.exchange([command('INCR', `{${tag}}:a`), command('INCR', other)]);
    expect(replies[0]).toBe(1);
    expect(replies[1]).toBeInstanceOf(RedisCommandError);
    expect((replies[1] as RedisCommandError).message).toMatch(/MOVED/);
    expect(pipeline).not.toHaveBeenCalled();
    expect(await client.get(`{${tag}}:a`)).toBe('1');
    expect(await client.get(other)).toBeNull();
  });
});
