/**
 * Server capabilities from INFO (src/redis/capabilities.ts), on the replies the servers of
 * this project send: Valkey names itself beside a `redis_version` of 7.2.4, Redis 7.0 has no
 * WAITAOF and no `inactive`. The live servers are checked in test/servers/capabilities.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { capabilitiesOf, describeServer, parseInfo } from '../../src/redis/capabilities';

/** Excerpts of `INFO server persistence`, CRLF lines as the servers send them. */
const REDIS_70 = ['# Server', 'redis_version:7.0.15', 'redis_git_sha1:00000000', 'redis_mode:standalone', '', '# Persistence', 'loading:0', 'aof_enabled:0', ''].join('\r\n');
const VALKEY_80 = ['# Server', 'redis_version:7.2.4', 'server_name:valkey', 'valkey_version:8.0.1', 'server_mode:standalone', '', '# Persistence', 'aof_enabled:1', ''].join('\r\n');
const REDIS_74 = ['# Server', 'redis_version:7.4.2', 'redis_mode:standalone', '', '# Persistence', 'aof_enabled:1'].join('\r\n');

describe('server capabilities', () => {
  it('reads INFO fields, skipping section headers and blank lines', () => {
    const info = parseInfo(VALKEY_80);
    expect(info.get('valkey_version')).toBe('8.0.1');
    expect(info.get('aof_enabled')).toBe('1');
    expect(info.has('# Server')).toBe(false);
    expect([...info.keys()]).toEqual(['redis_version', 'server_name', 'valkey_version', 'server_mode', 'aof_enabled']);
  });

  it('knows Redis 7.0: no WAITAOF, no inactive', () => {
    const caps = capabilitiesOf(parseInfo(REDIS_70));
    expect(caps).toEqual({ family: 'redis', version: '7.0.15', redisVersion: '7.0.15', waitAof: false, xinfoInactive: false, aofEnabled: false });
    expect(describeServer(caps)).toBe('redis 7.0.15');
  });

  it('knows Valkey by its own name and version, not by the redis_version it reports', () => {
    const caps = capabilitiesOf(parseInfo(VALKEY_80));
    expect(caps).toEqual({ family: 'valkey', version: '8.0.1', redisVersion: '7.2.4', waitAof: true, xinfoInactive: true, aofEnabled: true });
    // server_name alone is enough.
    expect(capabilitiesOf(parseInfo('redis_version:7.2.4\r\nserver_name:valkey')).family).toBe('valkey');
  });

  it('gives Redis 7.2 and later WAITAOF and inactive', () => {
    expect(capabilitiesOf(parseInfo(REDIS_74))).toMatchObject({ family: 'redis', version: '7.4.2', waitAof: true, xinfoInactive: true });
    expect(capabilitiesOf(parseInfo('redis_version:8.0.0'))).toMatchObject({ waitAof: true, xinfoInactive: true });
    expect(capabilitiesOf(parseInfo('redis_version:7.1.99'))).toMatchObject({ waitAof: false, xinfoInactive: false });
  });

  it('lets COMMAND INFO decide WAITAOF when it answered (a fork, a renamed command)', () => {
    expect(capabilitiesOf(parseInfo(REDIS_74), false).waitAof).toBe(false);
    expect(capabilitiesOf(parseInfo(REDIS_70), true).waitAof).toBe(true);
    expect(capabilitiesOf(parseInfo(REDIS_70), undefined).waitAof).toBe(false);
  });
});
