/**
 * The dashboard's gate, as Hono middleware: every page but the login form needs the admin
 * session cookie or `Authorization: Bearer <admin token>`; every state-changing request (the
 * sections' redrive POSTs included) must come from the dashboard's own pages.
 *
 * CSRF: the session cookie is SameSite=Strict, so a cross-site request never carries it; on top
 * of that a cookie-authenticated POST must say it is same-origin — `Sec-Fetch-Site:
 * same-origin` (every current browser sends it, and it survives proxies that rewrite Host),
 * or, from a browser that sends no fetch metadata, an `Origin` equal to the request's own.
 * A bearer-authenticated request needs neither: a browser never attaches that header by itself.
 * Bearer tokens are guesses like the login form's, under the same throttle (token-attempts.ts);
 * a session cookie is not (it is an HMAC nobody can guess, and an operator already logged in
 * keeps working while guessers are throttled).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { sessionCookieOf, type AdminAuth } from './admin-auth';
import { failure, wantsHtml } from './failures';
import { checkUnderThrottle, throttledAnswer, type TokenAttempts } from './token-attempts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a browser request came from a page of this origin. */
export function isSameOrigin(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = c.req.header('origin');
  return origin !== undefined && origin === new URL(c.req.url).origin;
}

export function crossSiteRefusal(c: Context): Response {
  return failure(c, 'cross_site_forbidden', 'Cross-site request refused', 'State-changing requests must come from the dashboard’s own pages.');
}

export interface GuardOptions {
  readonly auth: AdminAuth;
  readonly now: () => number;
  /** Where a browser without a session is sent. */
  readonly loginPath: string;
  readonly attempts: TokenAttempts;
}

export function adminGuard({ auth, now, loginPath, attempts }: GuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const checked = await checkUnderThrottle(c, attempts, 'bearer', () => auth.checkAuthorization(authorization));
      if (checked.outcome === 'throttled') return throttledAnswer(c, checked.retryAfterSeconds);
      if (checked.outcome === 'wrong') return failure(c, 'token_invalid', 'Admin token not recognised', 'Log in again.');
      return next();
    }
    if (!(await auth.checkSession(sessionCookieOf(c.req.header('cookie')), now()))) {
      if (wantsHtml(c) && SAFE_METHODS.has(c.req.method)) return c.redirect(loginPath, 303);
      return failure(c, 'token_missing', 'Log in first', 'The dashboard needs the admin token.');
    }
    if (!SAFE_METHODS.has(c.req.method) && !isSameOrigin(c)) return crossSiteRefusal(c);
    return next();
  };
}
