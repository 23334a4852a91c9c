/**
 * The Redis URL variable read as connectTcp reads it (src/redis/redis-url.ts): a password
 * may hold `,`, so a Cluster list is not split inside a node's userinfo, and a value that
 * does not parse fails naming the variable and never any piece of the text. End to end
 * against the test Cluster: test/redis/connect-tcp.test.ts.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/ground/errors';
import { parseClusterNodes, parseRedisUrl, splitNodeList } from '../../src/redis/redis-url';

/** Every way an error can be shown: message, stack, own fields (`input`), cause, JSON. */
function everythingShown(error: unknown): string {
  return `${String(error)}\n${inspect(error, { depth: 8, showHidden: true })}\n${JSON.stringify(error)}`;
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('splitNodeList', () => {
  it.each([
    ['10.0.0.1:7000,10.0.0.2:7001', ['10.0.0.1:7000', '10.0.0.2:7001']],
    ['redis://:pa,ss@h1:1', ['redis://:pa,ss@h1:1']],
    ['redis://u:12,34@h1:1,h2:2', ['redis://u:12,34@h1:1', 'h2:2']],
    ['rediss://u:a,b,c@h1:1,h2:2,redis://:x,y@h3:3', ['rediss://u:a,b,c@h1:1', 'h2:2', 'redis://:x,y@h3:3']],
    ['redis://u:p,q@r@h1:1,h2:2', ['redis://u:p,q@r@h1:1', 'h2:2']],
    ['u:p,q@h1:1,h2:2', ['u:p,q@h1:1', 'h2:2']],
    ['rediss://u:p@h:1,redis://:x/1secret@h2:2', ['rediss://u:p@h:1', 'redis://:x/1secret@h2:2']],
    // A query may hold a password too: it keeps the rest of its run.
    ['redis://h1:1/0?password=a,b,c', ['redis://h1:1/0?password=a,b,c']],
  ])('%s', (value, nodes) => {
    expect(splitNodeList(value)).toEqual(nodes);
  });
});

describe('parseClusterNodes', () => {
  it('a password holding commas is one password, on every node', () => {
    const seeds = parseClusterNodes('rediss://ops:Hunter2,Secret9@10.0.0.1:7000,10.0.0.2:7001', 'REDIS_URL');
    expect(seeds).toEqual({
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }],
      username: 'ops',
      password: 'Hunter2,Secret9',
      tls: true,
    });
  });

  it('a password whose first piece looks like a port is not read as a host (u:12,34@h)', () => {
    expect(parseClusterNodes('redis://u:12,34@h1:7000', 'REDIS_URL')).toEqual({ nodes: [{ host: 'h1', port: 7000 }], username: 'u', password: '12,34', tls: false });
  });

  it('percent-encoded and raw forms give the same password; bare host:port nodes take port 6379 by default', () => {
    expect(parseClusterNodes('redis://:a%2Cb%40c@h1,h2', 'REDIS_URL')).toEqual({ nodes: [{ host: 'h1', port: 6379 }, { host: 'h2', port: 6379 }], password: 'a,b@c', tls: false });
  });

  it.each([
    'redis://u:Hunter2,Secret9@127.0.0.1:99999,127.0.0.1:7001',
    'redis://u:Hunter2,Secret9@127.0.0.1:7000,h2:x',
    'redis://u:Hunter2,Secret9%@127.0.0.1:7000',
    'redis://u:Hunter2,Secret9@',
  ])('%s: a ConfigError naming the variable and the node, with no piece of the password', (value) => {
    const error = thrown(() => parseClusterNodes(value, 'ORDERS_REDIS_URL'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toMatchObject({ path: 'ORDERS_REDIS_URL', message: expect.stringMatching(/is not a valid host:port or redis:\/\/ URL/) });
    expect((error as { cause?: unknown }).cause).toBeUndefined();
    expect(everythingShown(error)).not.toMatch(/Hunter2|Secret9/);
  });

  it('lists every node that does not parse', () => {
    const error = thrown(() => parseClusterNodes('h1:1,h2:x,h3:3,h4:99999', 'REDIS_URL')) as ConfigError;
    expect(error.problems.map((problem) => problem.message.split(' is ')[0])).toEqual(['node 2 of 4', 'node 4 of 4']);
  });
});

describe('parseRedisUrl', () => {
  it('fails naming the variable, never with Node\'s error (whose `input` is the whole URL)', () => {
    expect(parseRedisUrl('redis://:Hunter2,Secret9@127.0.0.1:6380/0', 'REDIS_URL').password).toBe('Hunter2,Secret9');
    const error = thrown(() => parseRedisUrl('redis://u:Hunter2,Secret9@127.0.0.1:99999', 'REDIS_URL'));
    expect(error).toBeInstanceOf(ConfigError);
    expect(everythingShown(error)).toContain('REDIS_URL: is not a valid Redis URL');
    expect(everythingShown(error)).not.toMatch(/Hunter2|Secret9/);
  });

  it.each([
    ['not-a-url', 'is not a URL'],
    ['localhost:6379', 'is not a URL'],
    ['u:Hunter2,Secret9@10.0.0.1:6379', 'is not a URL'],
    ['http://u:Hunter2,Secret9@10.0.0.1:6379', 'is not a Redis URL'],
    ['redis://', 'has no host'],
  ])('%s: not taken for a host name — "%s", naming the variable and no piece of the value', (value, message) => {
    const error = thrown(() => parseRedisUrl(value, 'REDIS_URL'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([{ path: 'REDIS_URL', message: expect.stringContaining(`${message}: expected redis://[user:password@]host[:port][/db] or rediss://`) }]);
    expect(everythingShown(error)).not.toMatch(/Hunter2|Secret9|not-a-url|localhost|10\.0\.0\.1/);
  });

  it('takes redis:// and rediss:// with a host', () => {
    expect(parseRedisUrl('rediss://default:pw@cache.example:6380/2', 'REDIS_URL')).toMatchObject({ protocol: 'rediss:', hostname: 'cache.example', port: '6380' });
    expect(parseRedisUrl('redis://127.0.0.1', 'REDIS_URL').hostname).toBe('127.0.0.1');
  });
});
