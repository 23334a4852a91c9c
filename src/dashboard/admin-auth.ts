/**
 * The dashboard's admin credential (issue 17 §1): one admin token, separate from every
 * producer token, read from its own variable at construction.
 *
 * - A presented token (login form, or `Authorization: Bearer`) is compared by keyed digest in
 *   constant time, as producer tokens are (http/tokens.ts).
 * - A browser session is a cookie holding `<expiry>.<HMAC of the expiry under a key derived
 *   from the token>`: never the token itself, verifiable by any instance without shared
 *   state (a Lambda or Worker remembers nothing), and void once the token is rotated.
 *   HttpOnly (no script reads it), SameSite=Strict (no cross-site request carries it),
 *   Secure over HTTPS, and scoped to the dashboard's path.
 */
import { constantTimeEqual } from '../auth/constant-time';
import type { HmacEngine } from '../auth/hmac';
import { fromHex, toHex } from '../auth/hex';
import { SecretKey } from '../auth/secret';
import { ConfigError } from '../ground/errors';
import { readSecrets, type SecretEnv } from '../deployment/secrets';

export const SESSION_COOKIE = 'saga_ops_session';
/** How long a login lasts. */
export const SESSION_MS = 12 * 3600 * 1000;
/** Shorter admin tokens are refused at start: the dashboard can redrive dead letters. */
export const ADMIN_TOKEN_MIN_LENGTH = 16;

const utf8 = new TextEncoder();
const BEARER = /^bearer +(\S+) *$/i;

/** The session cookie's value in a `Cookie` header, if any (its value is `[0-9a-f.]` only). */
export function sessionCookieOf(header: string | undefined): string | undefined {
  return header?.match(new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]*)`))?.[1];
}

/**
 * `Set-Cookie` for a session value (empty value: expire it now). Scoped to the dashboard's
 * path; Secure when the dashboard is served over HTTPS.
 */
export function sessionCookieHeader(value: string, options: { readonly path: string; readonly secure: boolean }): string {
  const maxAge = value === '' ? 0 : SESSION_MS / 1000;
  return `${SESSION_COOKIE}=${value}; Max-Age=${maxAge}; Path=${options.path}; HttpOnly; SameSite=Strict${options.secure ? '; Secure' : ''}`;
}

export interface AdminAuth {
  /** Whether `token` is the admin token (constant time). */
  checkToken(token: string): Promise<boolean>;
  /** Whether an `Authorization` header carries the admin token. */
  checkAuthorization(header: string | undefined): Promise<boolean>;
  /** A fresh session cookie value, valid until `now + SESSION_MS`. */
  issueSession(now: number): Promise<string>;
  /** Whether a cookie value is a session this token issued and that has not expired. */
  checkSession(value: string | undefined, now: number): Promise<boolean>;
}

export function createAdminAuth(tokenEnv: string, env: SecretEnv, hmac: HmacEngine): AdminAuth {
  const token = readSecrets(env, [tokenEnv], 'dashboard admin token').get(tokenEnv)!;
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new ConfigError('dashboard admin token', [{ path: tokenEnv, message: `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters` }]);
  }
  // A random key per instance for comparing presented tokens; a key derived from the token
  // for sessions, which every instance must agree on.
  const compareKey = new SecretKey(crypto.getRandomValues(new Uint8Array(32)));
  const expected = hmac.mac(compareKey, utf8.encode(token));
  const sessionKey = Promise.resolve(hmac.mac(SecretKey.from(token), utf8.encode('saga-streams dashboard session v1'))).then((bytes) => new SecretKey(bytes));
  const sessionMac = async (expiry: string) => hmac.mac(await sessionKey, utf8.encode(`session:${expiry}`));

  const checkToken = async (presented: string) => constantTimeEqual(await hmac.mac(compareKey, utf8.encode(presented)), await expected);
  return {
    checkToken,
    async checkAuthorization(header) {
      const match = header === undefined ? null : BEARER.exec(header);
      return match ? checkToken(match[1]!) : false;
    },
    async issueSession(now) {
      const expiry = String(now + SESSION_MS);
      return `${expiry}.${toHex(await sessionMac(expiry))}`;
    },
    async checkSession(value, now) {
      const match = value === undefined ? null : /^(\d{1,16})\.([0-9a-f]{64})$/.exec(value);
      if (!match) return false;
      const valid = constantTimeEqual(await sessionMac(match[1]!), fromHex(match[2]!)!);
      return valid && Number(match[1]) > now;
    },
  };
}
