/**
 * The publish API without Redis traffic: start-up failures name variables, never values;
 * the problem catalogue is well-formed; token matching ignores the scheme's case only.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { problemResponse, Problems, PROBLEM_CONTENT_TYPE, type ProblemCode } from '../../src/web/problems';
import { createTokenAuthenticator } from '../../src/http/tokens';
import type { RedisPort } from '../../src/redis/port';
import { env, publishDeployment, SHOP_TOKEN } from './fixture';

/** A port no test here reaches: construction must not touch Redis. */
const unusedPort: RedisPort = {
  transport: 'tcp',
  cluster: false,
  exchange: () => Promise.reject(new Error('construction must not touch Redis')),
  close: async () => {},
};

function thrown(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('publish API construction', () => {
  const config = publishDeployment('t-construction');

  it('fails naming a missing token variable and never echoing a value', () => {
    const partial = { SHOP_TOKEN, SHOP_KEY: env.SHOP_KEY };
    const error = thrown(() => createPublishApp({ runtime: createRuntime(config, { port: unusedPort, env: partial }), env: partial }));
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(error.message).toContain('BILLING_TOKEN');
    expect(error.message).not.toContain(SHOP_TOKEN);
  });

  it('refuses two producers sharing one token', () => {
    const shared = { ...env, BILLING_TOKEN: SHOP_TOKEN };
    const error = thrown(() => createPublishApp({ runtime: createRuntime(config, { port: unusedPort, env: shared }), env: shared }));
    expect(error.message).toMatch(/billing.*same token as producer "shop"/);
    expect(error.message).not.toContain(SHOP_TOKEN);
  });

  it('refuses a deployment without a publishApi section', () => {
    const bare = { ...config, data: { ...config.data, publishApi: undefined } };
    expect(() => createPublishApp({ runtime: createRuntime(bare, { port: unusedPort, env }), env })).toThrow(/publishApi: is required/);
  });
});

describe('problem catalogue', () => {
  it('gives every code one status, a title, a URN type, and 503s a Retry-After', async () => {
    for (const code of Object.keys(Problems) as ProblemCode[]) {
      const res = problemResponse(code, 'why');
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
      expect(body).toEqual({ type: `urn:saga-streams:problem:${code}`, title: Problems[code].title, status: Problems[code].status, code, detail: 'why' });
      expect(res.status).toBe(Problems[code].status);
      expect(res.headers.has('retry-after')).toBe(res.status === 503);
      expect(code).toMatch(/^[a-z0-9_]+$/);
    }
  });

  it('keeps extension members from overriding the standard ones', async () => {
    const body = await problemResponse('invalid_request', 'd', { status: 999, code: 'x', extra: 1 }).json();
    expect(body).toMatchObject({ status: 400, code: 'invalid_request', extra: 1 });
  });
});

describe('token authenticator', () => {
  const tokens = createTokenAuthenticator({ shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed'] } }, env);

  it('accepts the bearer scheme in any case, and nothing but the exact token', async () => {
    for (const header of [`Bearer ${SHOP_TOKEN}`, `bearer ${SHOP_TOKEN}`, `BEARER  ${SHOP_TOKEN} `]) {
      expect(await tokens.authenticate(header)).toMatchObject({ ok: true, producer: 'shop' });
    }
    for (const header of [SHOP_TOKEN, `Bearer ${SHOP_TOKEN.toUpperCase()}`, `Bearer ${SHOP_TOKEN} extra`, `Bearer ${SHOP_TOKEN.slice(1)}`]) {
      expect(await tokens.authenticate(header)).toEqual({ ok: false, code: 'token_invalid' });
    }
    expect(await tokens.authenticate(undefined)).toEqual({ ok: false, code: 'token_missing' });
  });
});
