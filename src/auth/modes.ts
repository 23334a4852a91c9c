/**
 * Authentication modes per stream (SPEC §3.2):
 * - `hmac`: one key id + key; the publisher signs, the consumer requires that key id.
 * - `hmac-keyring`: consumer only; key id → {producer, key}. The key id decides who the
 *   producer is, and several keys verify side by side during a rotation.
 * - `exclusive-stream`: no signature; a Redis ACL guarantees one writer, named here.
 *
 * Parsed once, frozen, keys wrapped in SecretKey. A parsed mode serializes (JSON, inspect)
 * to its mode, key ids and producers only.
 */
import * as z from 'zod/mini';
import { problemsOf } from '../ground/config-problems';
import { ConfigError, type ConfigProblem } from '../ground/errors';
import { FrozenMap } from '../ground/frozen-map';
import { SecretKey, type KeyInput } from './secret';
import { IN_ENGLISH } from '../ground/zod-messages';

/** Shorter HMAC keys are guessable offline from one signed entry. */
export const MIN_KEY_BYTES = 16;

export interface HmacAuth {
  readonly mode: 'hmac';
  readonly keyId: string;
  readonly key: SecretKey;
  /** Identity of the stream's one producer; required by consumers. */
  readonly producer: string | undefined;
}

export interface VerificationKey {
  readonly producer: string;
  readonly key: SecretKey;
}

export interface KeyringAuth {
  readonly mode: 'hmac-keyring';
  readonly keys: ReadonlyMap<string, VerificationKey>;
}

export interface ExclusiveStreamAuth {
  readonly mode: 'exclusive-stream';
  readonly producer: string | undefined;
}

export type StreamAuth = HmacAuth | KeyringAuth | ExclusiveStreamAuth;

export type AuthRole = 'publisher' | 'consumer';

/** Built on first use (a function's first invocation), not when the module is imported. */
export const streamAuthSchema = z.lazy(() => {
  const keyInput = z
    .pipe(
      z.custom<KeyInput>(
        (value) => value instanceof Uint8Array || typeof value === 'string' || value instanceof SecretKey,
        'must be a Uint8Array, a string (its UTF-8 bytes) or a SecretKey',
      ),
      z.transform((value: KeyInput) => SecretKey.from(value)),
    )
    .check(z.refine((key) => key.byteLength >= MIN_KEY_BYTES, `must be at least ${MIN_KEY_BYTES} bytes`));
  const keyId = z.string().check(z.regex(/^[\x21-\x7e]{1,128}$/, 'must be 1..=128 printable ASCII characters without spaces'));
  const producer = z.string().check(z.minLength(1), z.maxLength(128));
  return z.discriminatedUnion('mode', [
    z.strictObject({ mode: z.literal('hmac'), keyId, key: keyInput, producer: z.optional(producer) }),
    z.strictObject({
      mode: z.literal('hmac-keyring'),
      keys: z
        .record(keyId, z.strictObject({ producer, key: keyInput }))
        .check(z.refine((keys) => Object.keys(keys).length > 0, 'must hold at least one key')),
    }),
    z.strictObject({ mode: z.literal('exclusive-stream'), producer: z.optional(producer) }),
  ]);
});

export type StreamAuthInput = z.input<typeof streamAuthSchema>;

const parsedModes = new WeakSet<object>();

/** What a config dump may show of a mode: never key bytes. */
export function describeAuth(auth: StreamAuth): Record<string, unknown> {
  if (auth.mode === 'hmac') return { mode: auth.mode, keyId: auth.keyId, producer: auth.producer };
  if (auth.mode === 'exclusive-stream') return { mode: auth.mode, producer: auth.producer };
  return { mode: auth.mode, keys: [...auth.keys].map(([id, { producer: p }]) => ({ keyId: id, producer: p })) };
}

function freezeAuth(auth: StreamAuth): StreamAuth {
  Object.defineProperty(auth, 'toJSON', { value: () => describeAuth(auth), enumerable: false });
  parsedModes.add(Object.freeze(auth));
  return auth;
}

function roleProblems(auth: StreamAuth, role: AuthRole, path: string): ConfigProblem[] {
  if (role === 'publisher' && auth.mode === 'hmac-keyring') {
    return [{ path: `${path}.mode`, message: 'a publisher cannot use a verification keyring: give it one key id and key (mode "hmac")' }];
  }
  if (role === 'consumer' && auth.mode !== 'hmac-keyring' && auth.producer === undefined) {
    return [{ path: `${path}.producer`, message: 'required for a consumer: it is the producer identity handed to handlers' }];
  }
  return [];
}

/** Problems of one auth input, paths prefixed with `path`; the parsed mode when there are none. */
export function checkStreamAuth(
  input: unknown,
  role: AuthRole,
  path = 'auth',
): { auth: StreamAuth; problems: [] } | { auth: undefined; problems: ConfigProblem[] } {
  if (typeof input === 'object' && input !== null && parsedModes.has(input)) {
    const auth = input as StreamAuth;
    const problems = roleProblems(auth, role, path);
    return problems.length > 0 ? { auth: undefined, problems } : { auth, problems: [] };
  }
  const parsed = streamAuthSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) {
    const problems = problemsOf(parsed.error).map((p) => ({ ...p, path: p.path ? `${path}.${p.path}` : path }));
    return { auth: undefined, problems };
  }
  const data = parsed.data;
  const auth: StreamAuth =
    data.mode === 'hmac-keyring'
      ? { mode: data.mode, keys: new FrozenMap(Object.entries(data.keys).map(([id, k]) => [id, Object.freeze({ ...k })])) }
      : data.mode === 'hmac'
        ? { mode: data.mode, keyId: data.keyId, key: data.key, producer: data.producer }
        : { mode: data.mode, producer: data.producer };
  const problems = roleProblems(auth, role, path);
  return problems.length > 0 ? { auth: undefined, problems } : { auth: freezeAuth(auth), problems: [] };
}

/** Parses and freezes an auth mode for a role, or throws a ConfigError listing every problem. */
export function parseStreamAuth(input: unknown, role: AuthRole): StreamAuth {
  const { auth, problems } = checkStreamAuth(input, role);
  if (!auth) throw new ConfigError(`${role} auth`, problems);
  return auth;
}
