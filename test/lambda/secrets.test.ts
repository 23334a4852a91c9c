/**
 * Secrets on Lambda: `X_SECRET_ID` pointers resolved through the Parameters and Secrets
 * extension (a local fake of its HTTP API), once per container, only those the function
 * uses; failures name the variable and the secret, never a value.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { extensionSecretFetcher } from '../../functions/aws/lib/secrets-extension';
import { resolveSecretEnv, secretPointerEnv } from '../../functions/aws/lib/secret-env';
import { createScheduledPollHandler } from '../../functions/aws/lib/scheduled-poll';
import { uniquePrefix } from '../support/redis';
import { baseEnv, deployment, harness, lambdaContext, scheduledEvent, type Harness } from './fixtures';
import { startFakeExtension, type FakeExtension } from './fake-extension';

const TOKEN = 'session-token-of-this-container';
const ORDERS_KEY = baseEnv().ORDERS_KEY!;

describe('secrets through the Parameters and Secrets extension', () => {
  let extension: FakeExtension;
  let run: Harness | undefined;
  afterEach(async () => {
    await run?.close();
    run = undefined;
    await extension.close();
  });

  it('reads Secrets Manager secrets and SSM parameters with the session token', async () => {
    extension = await startFakeExtension({
      token: TOKEN,
      secrets: { 'shop/redis-url': { SecretString: 'redis://example:6379' }, 'shop/raw-key': { SecretBinary: 'AAECAw==' } },
      parameters: { '/shop/orders-key': 'hex:0011' },
    });
    const fetchSecret = extensionSecretFetcher({ env: { AWS_SESSION_TOKEN: TOKEN }, endpoint: extension.url });
    const env = await resolveSecretEnv(
      {
        PLAIN: 'stays',
        ...secretPointerEnv('REDIS_URL', 'secretsmanager', 'shop/redis-url'),
        ...secretPointerEnv('ORDERS_KEY', 'ssm', '/shop/orders-key'),
        ...secretPointerEnv('RAW_KEY', 'secretsmanager', 'shop/raw-key'),
        ...secretPointerEnv('NOT_NEEDED', 'secretsmanager', 'shop/unused'),
      },
      ['REDIS_URL', 'ORDERS_KEY', 'RAW_KEY', 'PLAIN'],
      fetchSecret,
    );
    expect(env).toMatchObject({ PLAIN: 'stays', REDIS_URL: 'redis://example:6379', ORDERS_KEY: 'hex:0011', RAW_KEY: 'base64:AAECAw==' });
    expect(env.NOT_NEEDED).toBeUndefined();
    expect(extension.requests.sort()).toEqual([
      'secretsmanager/get?secretId=shop%2Fraw-key',
      'secretsmanager/get?secretId=shop%2Fredis-url',
      'systemsmanager/parameters/get?name=%2Fshop%2Forders-key&withDecryption=true',
    ].map((path) => `/${path}`));
  });

  it('fails naming the variable and the secret, never a value', async () => {
    extension = await startFakeExtension({ token: TOKEN, secrets: { 'shop/redis-url': { SecretString: 'redis://user:hunter2@example' } } });
    const wrongToken = extensionSecretFetcher({ env: { AWS_SESSION_TOKEN: 'stale' }, endpoint: extension.url });
    const ref = { variable: 'REDIS_URL', store: 'secretsmanager' as const, id: 'shop/redis-url' };
    const error = (await wrongToken(ref).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'SECRET_UNAVAILABLE' });
    expect(error.message).toBe('cannot read REDIS_URL from secretsmanager "shop/redis-url": extension answered HTTP 401');

    const missing = extensionSecretFetcher({ env: { AWS_SESSION_TOKEN: TOKEN }, endpoint: extension.url });
    await expect(missing({ variable: 'ORDERS_KEY', store: 'ssm', id: '/nope' })).rejects.toThrow(/ORDERS_KEY from ssm "\/nope": extension answered HTTP 400/);
    await expect(extensionSecretFetcher({ env: {}, endpoint: extension.url })(ref)).rejects.toThrow(/AWS_SESSION_TOKEN is not set/);
    await expect(resolveSecretEnv({ REDIS_URL_SECRET_ID: 'x', REDIS_URL_SECRET_STORE: 'vault' }, ['REDIS_URL'], missing)).rejects.toThrow(
      /REDIS_URL_SECRET_STORE: must be one of secretsmanager, ssm/,
    );
  });

  it('a poll function resolves only its own secrets, once per container, then polls real Redis', async () => {
    extension = await startFakeExtension({
      token: TOKEN,
      secrets: { 'shop/redis-url': { SecretString: inject('redisUrl') } },
      parameters: { '/shop/orders-key': ORDERS_KEY },
    });
    const env = {
      AWS_SESSION_TOKEN: TOKEN,
      ...secretPointerEnv('REDIS_URL', 'secretsmanager', 'shop/redis-url'),
      ...secretPointerEnv('ORDERS_KEY', 'ssm', '/shop/orders-key'),
      // The publish API's token: the stack never gives it to a poll function; it must not be read.
      ...secretPointerEnv('SHOP_TOKEN', 'secretsmanager', 'shop/token'),
      // Not a secret: the stack sets the wake-up queue URL on every function that publishes.
      WAKEUP_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/shop-wake-up',
    };
    run = harness({ env, fetchSecret: extensionSecretFetcher({ env, endpoint: extension.url }) });
    const handler = createScheduledPollHandler(deployment(uniquePrefix()), run.deps);
    await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(10_000));
    await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(10_000));

    expect(extension.requests.sort()).toEqual([
      '/secretsmanager/get?secretId=shop%2Fredis-url',
      '/systemsmanager/parameters/get?name=%2Fshop%2Forders-key&withDecryption=true',
    ]);
    expect(run.logged().map((line) => line.msg)).toEqual(['poll run', 'poll run']);
  });
});
