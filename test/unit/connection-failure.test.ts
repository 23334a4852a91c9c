/**
 * How a failed exchange is worded (src/redis/connection-failure.ts): the error the command
 * failed with, or the connection's last error when the command's own says nothing (ioredis'
 * "max retries", a timeout while a Cluster retried refused nodes). End to end through the
 * CLI: test/cli/connection-errors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { describeConnectionFailure, redisTarget } from '../../src/redis/connection-failure';

const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:6390`), { code });
const maxRetries = new Error('Reached the max retries per request limit (which is 0). Refer to "maxRetriesPerRequest" option for details.');
const WHERE = '127.0.0.1:6390';

describe('describeConnectionFailure', () => {
  it('names refused, timed-out-connecting and closed connections from the connection\'s last error', () => {
    expect(describeConnectionFailure(WHERE, maxRetries, systemError('ECONNREFUSED'))).toBe('127.0.0.1:6390 refused the connection');
    expect(describeConnectionFailure(WHERE, maxRetries, systemError('ETIMEDOUT'))).toBe('127.0.0.1:6390 timed out connecting');
    expect(describeConnectionFailure(WHERE, maxRetries, undefined)).toBe('127.0.0.1:6390 closed the connection');
    expect(describeConnectionFailure(WHERE, new Error('Connection is closed.'), undefined)).toBe('127.0.0.1:6390 closed the connection');
  });

  it('a timeout is "timed out", or the connection\'s failure when there was one (a Cluster\'s last node error included)', () => {
    const timeout = new Error('no reply within 10000 ms');
    expect(describeConnectionFailure(WHERE, timeout, undefined)).toBe('127.0.0.1:6390 timed out (no reply within 10000 ms)');
    const clusterFailed = Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: systemError('ECONNREFUSED') });
    expect(describeConnectionFailure('cluster 127.0.0.1:7000', timeout, clusterFailed)).toBe('cluster 127.0.0.1:7000 refused the connection (no reply within 10000 ms)');
  });

  it('keeps any other message, after the target', () => {
    expect(describeConnectionFailure(WHERE, new Error('Protocol error, got "H" as reply type byte'), undefined)).toBe('127.0.0.1:6390: Protocol error, got "H" as reply type byte');
  });

  it('targets carry host:port only, never userinfo', () => {
    expect(redisTarget('redis://default:hunter2@cache.internal:6380/0')).toBe('cache.internal:6380');
    expect(redisTarget('rediss://:pw@cache.internal')).toBe('cache.internal:6379');
    expect(redisTarget('127.0.0.1:7000')).toBe('127.0.0.1:7000');
  });

  it('a password holding / ? or # does not leak as the host (the parser ended the authority there)', () => {
    expect(redisTarget('redis://admin:1/2secret@cache.internal:6380')).toBe('cache.internal:6380');
    // An unencoded ? or # ends the URL where the secret may start: unparsable, never its pieces.
    expect(redisTarget('redis://:a?bsecret@cache.internal')).toBe('(unparsable URL)');
    expect(redisTarget('redis://:a#b@secret@cache.internal:1')).toBe('(unparsable URL)');
    expect(redisTarget('redis://cache.internal:6380/?password=se@cret')).toBe('cache.internal:6380');
  });
});
