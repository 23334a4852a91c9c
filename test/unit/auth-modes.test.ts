/** SPEC §3.2 auth modes: what each role accepts, and every problem reported at once. */
import { describe, expect, it } from 'vitest';
import { constantTimeEqual } from '../../src/auth/constant-time';
import { MIN_KEY_BYTES, parseStreamAuth } from '../../src/auth/modes';
import { SecretKey } from '../../src/auth/secret';

const KEY = 'k'.repeat(MIN_KEY_BYTES);

function problemsOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (error) {
    return (error as { problems: Array<{ path: string; message: string }> }).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('auth modes', () => {
  it('lets a publisher sign with one key, and refuses it a keyring', () => {
    expect(parseStreamAuth({ mode: 'hmac', keyId: 'k1', key: KEY }, 'publisher')).toMatchObject({ mode: 'hmac', keyId: 'k1' });
    expect(parseStreamAuth({ mode: 'exclusive-stream' }, 'publisher').mode).toBe('exclusive-stream');
    const problems = problemsOf(() => parseStreamAuth({ mode: 'hmac-keyring', keys: { k1: { producer: 'p', key: KEY } } }, 'publisher'));
    expect(problems).toEqual([{ path: 'auth.mode', message: expect.stringContaining('cannot use a verification keyring') }]);
  });

  it('requires a consumer to know the producer of an hmac or exclusive stream', () => {
    expect(problemsOf(() => parseStreamAuth({ mode: 'hmac', keyId: 'k1', key: KEY }, 'consumer'))).toEqual([
      { path: 'auth.producer', message: expect.stringContaining('required for a consumer') },
    ]);
    expect(problemsOf(() => parseStreamAuth({ mode: 'exclusive-stream' }, 'consumer'))[0]?.path).toBe('auth.producer');
    const keyring = parseStreamAuth(
      { mode: 'hmac-keyring', keys: { old: { producer: 'billing', key: KEY }, new: { producer: 'billing', key: `${KEY}2` } } },
      'consumer',
    );
    expect(keyring.mode === 'hmac-keyring' && [...keyring.keys.keys()]).toEqual(['old', 'new']);
  });

  it('keeps a keyring read-only at run time: nobody holding the parsed auth can add a verification key', () => {
    const keyring = parseStreamAuth({ mode: 'hmac-keyring', keys: { old: { producer: 'billing', key: KEY } } }, 'consumer');
    if (keyring.mode !== 'hmac-keyring') throw new Error('expected a keyring');
    const asMap = keyring.keys as unknown as Map<string, unknown>;
    expect(asMap.set).toBeUndefined();
    expect(() => asMap.set('forged', { producer: 'billing' })).toThrow(TypeError);
    expect([...keyring.keys.keys()]).toEqual(['old']);
  });

  it('lists every problem of a mode by field path', () => {
    const problems = problemsOf(() => parseStreamAuth({ mode: 'hmac', keyId: 'has space', key: 'short', producer: '' }, 'consumer'));
    expect(problems.map((p) => p.path).sort()).toEqual(['auth.key', 'auth.keyId', 'auth.producer']);
    expect(problems.find((p) => p.path === 'auth.key')?.message).toBe(`must be at least ${MIN_KEY_BYTES} bytes`);
    expect(problemsOf(() => parseStreamAuth({ mode: 'hmac-keyring', keys: {} }, 'consumer'))[0]?.path).toBe('auth.keys');
    expect(problemsOf(() => parseStreamAuth({ mode: 'hmac', keyId: 'k', key: 42 }, 'publisher'))[0]?.path).toBe('auth.key');
  });

  it('accepts a key as bytes, as text, or as a SecretKey, and a parsed mode again', () => {
    const bytes = parseStreamAuth({ mode: 'hmac', keyId: 'k', key: new TextEncoder().encode(KEY) }, 'publisher');
    const parsed = parseStreamAuth({ mode: 'hmac', keyId: 'k', key: SecretKey.from(KEY), producer: 'p' }, 'consumer');
    expect(bytes.mode === 'hmac' && bytes.key.byteLength).toBe(MIN_KEY_BYTES);
    expect(parseStreamAuth(parsed, 'consumer')).toBe(parsed);
    expect(Object.isFrozen(parsed)).toBe(true);
  });
});

describe('constantTimeEqual', () => {
  it('compares bytes', () => {
    const a = Uint8Array.from([1, 2, 3]);
    expect(constantTimeEqual(a, Uint8Array.from([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(a, Uint8Array.from([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(a, Uint8Array.from([1, 2]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });
});
