/** SPEC §5.4 / §6.1 publisher configuration: every problem at once, routes frozen. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_DEDUPE_WINDOW_SECONDS, parsePublisherConfig } from '../../src/publish/config';

const KEY = 'publisher-config-key-0000000001';
const auth = { mode: 'hmac', keyId: 'k1', key: KEY };

function problemPaths(input: unknown, cluster = false): string[] {
  try {
    parsePublisherConfig(input, { cluster });
  } catch (error) {
    return (error as { problems: Array<{ path: string }> }).problems.map((p) => p.path).sort();
  }
  throw new Error('expected a ConfigError');
}

describe('publisher config', () => {
  it('resolves routes to streams, dedupe prefixes and auth, and freezes them', () => {
    const config = parsePublisherConfig(
      {
        routes: {
          'order.placed': 'orders',
          'payment.charged': { stream: 'payments', publishDedupePrefix: 'payments:dedupe:', auth: { mode: 'exclusive-stream' } },
        },
        auth,
      },
      { cluster: false },
    );
    expect(config.dedupeWindowSeconds).toBe(DEFAULT_DEDUPE_WINDOW_SECONDS);
    expect(config.routes.get('order.placed')).toMatchObject({ stream: 'orders', dedupePrefix: 'orders:pub:', auth: { mode: 'hmac', keyId: 'k1' } });
    expect(config.routes.get('payment.charged')).toMatchObject({ stream: 'payments', dedupePrefix: 'payments:dedupe:', auth: { mode: 'exclusive-stream' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.routes.get('order.placed'))).toBe(true);
  });

  it('exposes a route map that nothing can change at run time', () => {
    const config = parsePublisherConfig({ routes: { 'order.placed': 'orders' }, auth }, { cluster: false });
    const route = config.routes.get('order.placed')!;
    const asMap = config.routes as unknown as Map<string, unknown>;
    const redirect = () => asMap.set('order.placed', { ...route, stream: 'elsewhere' });
    expect(redirect).toThrow(TypeError);
    expect(() => Map.prototype.set.call(asMap, 'order.placed', route)).toThrow(TypeError);
    expect(() => asMap.delete('order.placed')).toThrow(TypeError);
    expect(() => asMap.clear()).toThrow(TypeError);
    expect(() => Object.defineProperty(config.routes, 'get', { value: () => route })).toThrow(TypeError);
    expect(Object.isFrozen(config.routes)).toBe(true);
    // Reading still works like a Map.
    expect(config.routes.get('order.placed')).toBe(route);
    expect([...config.routes]).toEqual([['order.placed', route]]);
    expect([...config.routes.keys()]).toEqual(['order.placed']);
    expect(config.routes.size).toBe(1);
  });

  it('needs at least one route and valid bounds', () => {
    expect(problemPaths({ routes: {}, auth, dedupeWindowSeconds: -1, timeoutMs: 0 })).toEqual(['dedupeWindowSeconds', 'routes', 'timeoutMs']);
    expect(problemPaths({ routes: { a: 'has space' }, auth, extra: 1 })).toEqual(['', 'routes.a']);
  });

  it('refuses a keyring and routes without any auth, naming each', () => {
    expect(problemPaths({ routes: { a: 'x', b: 'y' }, auth: { mode: 'hmac-keyring', keys: { k: { producer: 'p', key: KEY } } } })).toEqual(['auth.mode']);
    expect(problemPaths({ routes: { a: 'x', b: { stream: 'y', auth } } })).toEqual(['auth']);
    expect(problemPaths({ routes: { b: { stream: 'y', auth: { mode: 'hmac', keyId: 'k', key: 'short' } } } })).toEqual(['routes.b.auth.key']);
  });

  it('keeps every key on the configured hash tag', () => {
    expect(problemPaths({ routes: { a: 'orders:{t}', b: 'payments', c: { stream: 'x:{t}', publishDedupePrefix: 'dedupe:' } }, auth, keyTag: 't' })).toEqual([
      'routes.b',
      'routes.b.publishDedupePrefix',
      'routes.c.publishDedupePrefix',
    ]);
  });

  it('on Cluster with dedupe, needs a hash tag shared by the stream and its dedupe records', () => {
    expect(problemPaths({ routes: { a: 'orders', b: 'pay:{p}', c: { stream: 'x:{t}', publishDedupePrefix: 'y:{u}:' } }, auth }, true)).toEqual([
      'routes.a',
      'routes.c',
    ]);
    expect(() => parsePublisherConfig({ routes: { a: 'orders' }, auth, dedupeWindowSeconds: 0 }, { cluster: true })).not.toThrow();
  });
});
