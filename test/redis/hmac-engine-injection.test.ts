/**
 * The HMAC engine is chosen where consumers and publishers are built (issue 15 item 4),
 * not by a process-wide setter a Node entry point could forget: a runtime signs, verifies
 * and digests producer tokens through the engine it is given, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { webCryptoHmac, type HmacEngine } from '../../src/auth/hmac';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { createRuntime } from '../../src/deployment/runtime';
import { nodeHmac } from '../../src/node/crypto';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { command } from '../../src/redis/port';
import { runCommand } from '../../src/redis/script';
import { inject } from 'vitest';
import { uniquePrefix } from '../support/redis';

function counting(inner: HmacEngine) {
  const calls = { mac: 0, verify: 0 };
  const engine: HmacEngine = {
    name: `counting-${inner.name}`,
    synchronous: inner.synchronous,
    mac: (key, message) => ((calls.mac += 1), inner.mac(key, message)),
    verify: (key, message, expected) => ((calls.verify += 1), inner.verify(key, message, expected)),
  };
  return { engine, calls };
}

function deployment(stream: string) {
  return defineConfig({
    name: 'engines',
    redis: { tcp: {} },
    streams: { [stream]: { auth: { mode: 'hmac', keyId: 'k1', keyEnv: 'KEY', producer: 'shop' } } },
    routes: { 'order.placed': stream },
    consumers: { sink: { stream, group: 'sink', schedule: '* * * * *', handler: entryConsumer(() => 'committed') } },
  });
}

const env = { KEY: 'engine-injection-key-0123456789' };

describe.each([nodeHmac, webCryptoHmac])('a runtime built with the $name engine', (inner) => {
  it('signs every published entry and verifies every consumed one through that engine', async () => {
    const stream = `${uniquePrefix()}:orders`;
    const port = connectIoredis(inject('redisUrl'));
    try {
      const { engine, calls } = counting(inner);
      const runtime = createRuntime(deployment(stream), { port, env, hmac: engine });
      expect(runtime.hmac).toBe(engine);
      await runCommand(port, command('XGROUP', 'CREATE', stream, 'sink', '0', 'MKSTREAM'));
      const poller = runtime.poller('sink');
      const publisher = runtime.publisherFor('shop');
      for (const id of ['e1', 'e2', 'e3']) await publisher.publish({ eventType: 'order.placed', eventId: id, payload: '{}' });
      const report = await poller.run({ mode: 'drain' });
      expect(report.acked).toBe(3);
      expect(report.authRejected).toBe(0);
      expect(calls).toEqual({ mac: 3, verify: 3 });
    } finally {
      await port.close();
    }
  });
});

describe('a runtime built without an engine', () => {
  it('uses Web Crypto, which runs on every platform', () => {
    const port = connectIoredis(inject('redisUrl'));
    expect(createRuntime(deployment(`${uniquePrefix()}:orders`), { port, env }).hmac).toBe(webCryptoHmac);
    return port.close();
  });
});
