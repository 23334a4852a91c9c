/**
 * The admin-token throttle's buckets and client keys (src/dashboard/login-throttle.ts,
 * client-address.ts), without HTTP. Through the dashboard app: test/dashboard/login-throttle.test.ts.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { clientKey, clientKeyOf, UNKNOWN_CLIENT } from '../../src/dashboard/client-address';
import { createLoginThrottle, LOGIN_LIMITS } from '../../src/dashboard/login-throttle';

const UNBOUNDED_GLOBAL = { burst: 1e12, refillMs: 1 };

describe('login throttle', () => {
  it('remembers at most maxClients clients, however many names it is given', () => {
    const throttle = createLoginThrottle({ ...LOGIN_LIMITS, global: UNBOUNDED_GLOBAL, maxClients: 100 });
    for (let i = 0; i < 20_000; i += 1) expect(throttle.attempt(`client-${i}`, 1_000).allowed).toBe(true);
    expect(throttle.clients).toBe(100);
  });

  it('forgets a client once its bucket is full again, so the table holds only recent guessers', () => {
    const throttle = createLoginThrottle({ ...LOGIN_LIMITS, global: UNBOUNDED_GLOBAL });
    for (let i = 0; i < 1_000; i += 1) throttle.attempt(`client-${i}`, 0);
    expect(throttle.clients).toBe(1_000);
    throttle.attempt('late', LOGIN_LIMITS.perClient.refillMs);
    expect(throttle.clients).toBe(1);
  });

  it('keeps the most recently seen clients, so a throttled one stays throttled while others come and go', () => {
    const throttle = createLoginThrottle({ perClient: { burst: 1, refillMs: 60_000 }, global: UNBOUNDED_GLOBAL, maxClients: 3 });
    expect(throttle.attempt('guesser', 0).allowed).toBe(true);
    expect(throttle.attempt('guesser', 1).allowed).toBe(false);
    throttle.attempt('a', 2);
    throttle.attempt('guesser', 3);
    throttle.attempt('b', 4);
    expect(throttle.attempt('guesser', 5)).toMatchObject({ allowed: false, scope: 'client', first: false });
  });

  it('a refused attempt says when the next one is allowed, and a right token gives its attempt back', () => {
    const throttle = createLoginThrottle({ perClient: { burst: 2, refillMs: 1_000 }, global: { burst: 3, refillMs: 10_000 }, maxClients: 10 });
    const first = throttle.attempt('a', 0);
    if (first.allowed) first.succeeded();
    throttle.attempt('a', 0);
    throttle.attempt('a', 0);
    expect(throttle.attempt('a', 250)).toMatchObject({ allowed: false, retryAfterMs: 750, scope: 'client', first: true });
    throttle.attempt('b', 300);
    expect(throttle.attempt('c', 300)).toMatchObject({ allowed: false, retryAfterMs: 9_700, scope: 'all clients', first: true });
    expect(throttle.attempt('c', 301)).toMatchObject({ allowed: false, first: false });
  });
});

describe('client keys', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:DB8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['x'.repeat(500), 'x'.repeat(64)],
  ])('%s → %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });

  const keyOf = async (request: Request, env?: unknown) => (await new Hono().get('/', (c) => c.text(clientKeyOf(c))).request(request, undefined, env)).text();

  it('reads the address each platform gives, and no header a client could set', async () => {
    const forwarded = { 'x-forwarded-for': '192.0.2.1', 'cf-connecting-ip': '192.0.2.2' };
    const plain = () => new Request('http://h/', { headers: forwarded });
    expect(await keyOf(plain(), { incoming: { socket: { remoteAddress: '198.51.100.1' } } })).toBe('198.51.100.1');
    expect(await keyOf(plain(), { requestContext: { http: { sourceIp: '198.51.100.2' } } })).toBe('198.51.100.2');
    expect(await keyOf(plain(), { requestContext: { identity: { sourceIp: '198.51.100.3' } } })).toBe('198.51.100.3');
    expect(await keyOf(Object.assign(plain(), { cf: {} }))).toBe('192.0.2.2');
    expect(await keyOf(plain())).toBe(UNKNOWN_CLIENT);
  });
});
