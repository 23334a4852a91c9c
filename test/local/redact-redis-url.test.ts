import { describe, expect, it } from 'vitest';
import { redactRedisUrl } from '../../local/local-redis';

const standalone = { cluster: false };
const cluster = { cluster: true };

describe('redactRedisUrl', () => {
  it('keeps scheme, host, port and database', () => {
    expect(redactRedisUrl('redis://127.0.0.1:6379/2', standalone)).toBe('redis://127.0.0.1:6379/2');
    expect(redactRedisUrl('rediss://cache.example:6380', standalone)).toBe('rediss://cache.example:6380');
    expect(redactRedisUrl('10.0.0.1:7000,10.0.0.2:7001', cluster)).toBe('redis://10.0.0.1:7000,redis://10.0.0.2:7001');
  });

  it.each([
    ['redis://user:pw@h:6379/0', 'redis://h:6379/0'],
    // A parser ends the authority at `/`, `?` or `#`: the password's tail came back as a path.
    ['redis://u:1/2secret@h', 'redis://h'],
    ['redis://:12/34secret@h:6379', 'redis://h:6379'],
    ['redis://:a?bsecret@h:1', '(unparsable)'],
    ['redis://:a#bsecret@h:1/3', '(unparsable)'],
    ['redis://h:1/0?password=se@cret', 'redis://h:1/0'],
    ['redis://:p@ss@secret@h:1', 'redis://h:1'],
    // A password may hold `,`: a standalone URL is one URL, and its first piece is no host.
    ['redis://u:12,34secret@h:1', 'redis://h:1'],
    ['redis://:pw,secret@h:1', 'redis://h:1'],
  ])('drops the credentials of %s', (url, shown) => {
    const redacted = redactRedisUrl(url, standalone);
    expect(redacted).toBe(shown);
    expect(redacted).not.toMatch(/secret|pw|:p@|u:|12/);
  });

  it.each([
    ['rediss://u:p@h:1,redis://:x/1secret@h2:2', 'rediss://h:1,redis://h2:2'],
    ['redis://u:12,34secret@h:1,h2:2', 'redis://h:1,redis://h2:2'],
    ['redis://:pw,a,secret@h:1,h2:2,redis://:secret,x@h3:3', 'redis://h:1,redis://h2:2,redis://h3:3'],
    ['redis://h:1/0?password=pw,secret,h9:9', 'redis://h:1/0'],
  ])('drops the credentials of the Cluster list %s, split where connectTcp splits it', (url, shown) => {
    const redacted = redactRedisUrl(url, cluster);
    expect(redacted).toBe(shown);
    expect(redacted).not.toMatch(/secret|pw|:p@|u:|12|h9/);
  });
});
