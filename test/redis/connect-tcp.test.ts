/**
 * connectTcp reads the Redis URL variable (src/redis/redis-url.ts): a Cluster URL whose
 * password holds `,` is one URL — it connects, to the test Cluster (whose `default` user has
 * no password, so any password is accepted) — and a value that does not parse fails naming
 * the variable, never with a piece of the password (Node's URL error carries it in `input`).
 */
import { inspect } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { connectTcp } from '../../src/deployment/connect-tcp';
import { defineConfig } from '../../src/deployment/define-config';
import { entryConsumer } from '../../src/deployment/consumers';
import { ConfigError } from '../../src/ground/errors';
import { command } from '../../src/redis/port';
import { runCommand } from '../../src/redis/script';

const PASSWORD = 'Hunter2,Secret9';

function configWith(cluster: boolean) {
  return defineConfig({
    name: 'connect-tcp-test',
    redis: { tcp: { urlEnv: 'ORDERS_REDIS_URL', cluster } },
    streams: { 'orders:{t}': { keyTag: 't', auth: { mode: 'exclusive-stream', producer: 'shop' } } },
    routes: { 'order.placed': 'orders:{t}' },
    consumers: { fulfil: { stream: 'orders:{t}', group: 'fulfil', schedule: '* * * * *', handler: entryConsumer(() => {}) } },
  });
}

function connectError(cluster: boolean, url: string): unknown {
  try {
    void connectTcp(configWith(cluster), { ORDERS_REDIS_URL: url }).close();
  } catch (error) {
    return error;
  }
  throw new Error('connectTcp did not throw');
}

const shown = (error: unknown) => `${String(error)}\n${inspect(error, { depth: 8, showHidden: true })}\n${JSON.stringify(error)}`;

describe('connectTcp', () => {
  it('a Cluster URL whose password holds "," is one URL, and connects', async () => {
    const [first, second] = inject('clusterNodes');
    const port = connectTcp(configWith(true), { ORDERS_REDIS_URL: `redis://default:${PASSWORD}@${first!.host}:${first!.port},${second!.host}:${second!.port}` });
    try {
      expect(Buffer.from((await runCommand(port, command('PING'))) as Uint8Array).toString()).toBe('PONG');
    } finally {
      await port.close();
    }
  });

  it.each([
    [true, `redis://ops:${PASSWORD}@127.0.0.1:99999,127.0.0.1:7001`],
    [true, `redis://ops:${PASSWORD}@127.0.0.1:7000,127.0.0.1:port`],
    [false, `redis://ops:${PASSWORD}@127.0.0.1:99999`],
    [false, `redis://ops:${PASSWORD}%zz@127.0.0.1:6379`],
  ])('cluster %s, %s: a ConfigError naming the variable, with no piece of the password in any field', (cluster, url) => {
    const error = connectError(cluster, url);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((problem) => problem.path)).toEqual(['ORDERS_REDIS_URL']);
    expect(error).not.toHaveProperty('input');
    expect(error).not.toHaveProperty('cause');
    expect(shown(error)).not.toMatch(/Hunter2|Secret9/);
  });
});
