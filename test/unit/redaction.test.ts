/**
 * Key material never leaves in text: every way a mode, a publisher or a consumer is
 * usually turned into a string is scanned for the key in every common encoding, and so is
 * every error thrown while building them with the key present.
 */
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseStreamAuth, describeAuth } from '../../src/auth/modes';
import { SecretKey } from '../../src/auth/secret';
import type { RedisPort } from '../../src/redis/port';
import { createPublisher } from '../../src/publish/publisher';
import { createCapabilityCommandConsumer, createCommandConsumer } from '../../src/saga/command-consumer';
import { createResultConsumer } from '../../src/saga/result-consumer';

const TEXT_KEY = 'S3cr3t-text-key-material-0042';
const BINARY_KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
const SHORT_KEY = 'tiny-k3y'; // below the minimum length, still a secret

function encodings(secret: string | Uint8Array): string[] {
  const buffer = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  const forms = [
    buffer.toString('hex'),
    buffer.toString('base64'),
    buffer.toString('base64url'),
    [...buffer].slice(0, 8).join(','), // a byte array in JSON
    [...buffer].slice(0, 8).join(', '), // a byte array in util.inspect
    JSON.stringify(Uint8Array.from(buffer)).slice(1, 40), // a typed array in JSON: "0":11,"1":48,...
  ];
  return typeof secret === 'string' ? [secret, ...forms] : forms;
}
const SECRETS = [...encodings(TEXT_KEY), ...encodings(BINARY_KEY), ...encodings(SHORT_KEY)];

function renderings(value: unknown): string[] {
  const out = [inspect(value, { depth: Infinity, showHidden: true }), inspect(value, { depth: Infinity })];
  try {
    out.push(JSON.stringify(value) ?? '');
  } catch {
    // Some values refuse JSON (cycles); their other renderings are still scanned.
  }
  try {
    out.push(String(value));
  } catch {
    // Objects without a string form.
  }
  if (value instanceof Error) out.push(value.message, value.stack ?? '', JSON.stringify({ ...value }));
  return out;
}

function expectNoSecret(value: unknown): void {
  for (const text of renderings(value)) {
    for (const secret of SECRETS) expect(text, `leaked ${secret} in ${text.slice(0, 200)}`).not.toContain(secret);
  }
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Never used for I/O: building a publisher or consumer sends nothing. */
const idlePort: RedisPort = {
  transport: 'tcp',
  cluster: false,
  exchange: () => Promise.reject(new Error('unused')),
  close: async () => {},
};
const consumerConfig = { stream: 'orders', group: 'g', consumer: 'c' };

describe('key material redaction', () => {
  it('redacts a SecretKey in inspect, JSON, String and template literals', () => {
    const key = SecretKey.from(TEXT_KEY);
    expectNoSecret(key);
    expect(`${key}`).toBe('[redacted]');
    expect(JSON.stringify({ key })).toBe('{"key":"[redacted]"}');
    expect(inspect({ key })).toContain('[redacted]');
    expectNoSecret(SecretKey.fromHex(Buffer.from(BINARY_KEY).toString('hex')));
    expectNoSecret(SecretKey.fromBase64(Buffer.from(BINARY_KEY).toString('base64')));
  });

  it('keeps the caller from changing a key after the fact: it still signs with the bytes it was given', async () => {
    const message = new TextEncoder().encode('entry to sign');
    const expected = createHmac('sha256', Buffer.from(BINARY_KEY)).update(message).digest('hex');
    for (const make of [(b: Uint8Array) => new SecretKey(b), (b: Uint8Array) => SecretKey.from(b)]) {
      const bytes = Uint8Array.from(BINARY_KEY);
      const key = make(bytes);
      bytes.fill(0); // before the key is ever used: a key that kept the caller's array now signs with zeros
      const signature = await crypto.subtle.sign('HMAC', await key.hmacKey(), message);
      expect(Buffer.from(signature).toString('hex')).toBe(expected);
      expect(key.byteLength).toBe(32);
      expectNoSecret(key);
    }
  });

  it('shows parsed modes by key id and producer only', () => {
    const hmac = parseStreamAuth({ mode: 'hmac', keyId: 'k1', key: TEXT_KEY, producer: 'orders-svc' }, 'consumer');
    const keyring = parseStreamAuth(
      { mode: 'hmac-keyring', keys: { k1: { producer: 'a', key: TEXT_KEY }, k2: { producer: 'b', key: BINARY_KEY } } },
      'consumer',
    );
    for (const mode of [hmac, keyring]) expectNoSecret(mode);
    expect(JSON.parse(JSON.stringify(hmac))).toEqual({ mode: 'hmac', keyId: 'k1', producer: 'orders-svc' });
    expect(describeAuth(keyring)).toEqual({ mode: 'hmac-keyring', keys: [{ keyId: 'k1', producer: 'a' }, { keyId: 'k2', producer: 'b' }] });
    expect(inspect(keyring, { depth: Infinity })).toContain('k2');
  });

  it('never echoes a key in configuration errors', () => {
    const errors = [
      thrown(() => parseStreamAuth({ mode: 'hmac', keyId: 'k1', key: SHORT_KEY }, 'publisher')),
      thrown(() => parseStreamAuth({ mode: 'hmac', keyId: 'bad id', key: TEXT_KEY, extra: TEXT_KEY }, 'consumer')),
      thrown(() => parseStreamAuth({ mode: 'hmac-keyring', keys: { k1: { producer: 'a', key: TEXT_KEY } } }, 'publisher')),
      thrown(() => parseStreamAuth({ mode: TEXT_KEY, key: TEXT_KEY }, 'consumer')),
      thrown(() => parseStreamAuth({ mode: 'hmac-keyring', keys: { k1: { key: BINARY_KEY } } }, 'consumer')),
      thrown(() => createPublisher({ port: idlePort, routes: {}, auth: { mode: 'hmac', keyId: 'k1', key: TEXT_KEY } })),
      thrown(() =>
        createPublisher({ port: idlePort, routes: { a: 'orders' }, auth: { mode: 'hmac-keyring', keys: { k1: { producer: 'p', key: TEXT_KEY } } } }),
      ),
      thrown(() =>
        createCommandConsumer({
          port: idlePort,
          config: { ...consumerConfig, batch: 0 },
          auth: { mode: 'hmac', keyId: 'k1', key: TEXT_KEY },
          route: { workflow: 'w', definitionVersion: 0, definitionDigest: TEXT_KEY, step: 's' },
          handler: () => {},
        }),
      ),
      thrown(() =>
        createCapabilityCommandConsumer({
          port: idlePort,
          config: consumerConfig,
          auth: { mode: 'hmac', keyId: 'k1', key: SHORT_KEY, producer: 'p' },
          route: { workflow: 'w', definitionVersion: 1, step: 's' },
          handler: () => {},
        }),
      ),
      thrown(() =>
        createResultConsumer({
          port: idlePort,
          config: consumerConfig,
          auth: { mode: 'hmac-keyring', keys: { 'bad id': { producer: 'p', key: TEXT_KEY } } },
          allowedProducers: { step: [] },
          handler: () => {},
        }),
      ),
    ];
    for (const error of errors) {
      expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
      expectNoSecret(error);
    }
  });

  it('never shows a key through a built publisher', () => {
    const publisher = createPublisher({
      port: idlePort,
      routes: { 'order.placed': 'orders', 'payment.charged': { stream: 'payments', auth: { mode: 'hmac', keyId: 'k2', key: BINARY_KEY } } },
      auth: { mode: 'hmac', keyId: 'k1', key: TEXT_KEY },
    });
    expectNoSecret(publisher);
    expectNoSecret(publisher.config);
    expectNoSecret([...publisher.config.routes.values()]);
  });
});
