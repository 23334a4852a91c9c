/**
 * One admin-token check under the login throttle (login-throttle.ts), shared by the login
 * form and the bearer header: a throttled client gets a 429 answer before its token is
 * looked at, and the first refusal of a throttled spell is logged (never the token, never
 * each refusal: a flood of guesses must not flood the log).
 */
import type { Context } from 'hono';
import type { Logger } from '../web/log';
import { clientKeyOf } from './client-address';
import { failure } from './failures';
import type { LoginThrottle } from './login-throttle';

export interface TokenAttempts {
  readonly throttle: LoginThrottle;
  readonly now: () => number;
  readonly log: Logger;
}

export type TokenCheck = { readonly outcome: 'right' | 'wrong' } | { readonly outcome: 'throttled'; readonly retryAfterSeconds: number };

/** `check` runs only when the client may try; a right token costs the client nothing. */
export async function checkUnderThrottle(c: Context, attempts: TokenAttempts, via: 'login' | 'bearer', check: () => Promise<boolean>): Promise<TokenCheck> {
  const attempt = attempts.throttle.attempt(clientKeyOf(c), attempts.now());
  if (!attempt.allowed) {
    const retryAfterSeconds = Math.max(1, Math.ceil(attempt.retryAfterMs / 1000));
    if (attempt.first) attempts.log.warn('dashboard token attempts throttled', { detail: { via, scope: attempt.scope, retryAfterSeconds } });
    return { outcome: 'throttled', retryAfterSeconds };
  }
  if (!(await check())) return { outcome: 'wrong' };
  attempt.succeeded();
  return { outcome: 'right' };
}

export function throttledDetail(retryAfterSeconds: number): string {
  return `Too many admin token attempts from here: try again in ${retryAfterSeconds} s.`;
}

/** The 429 (a page or problem+json, as the client asked), with `Retry-After`. */
export function throttledAnswer(c: Context, retryAfterSeconds: number): Response {
  const response = failure(c, 'too_many_attempts', 'Too many attempts', throttledDetail(retryAfterSeconds));
  response.headers.set('retry-after', String(retryAfterSeconds));
  return response;
}
