/**
 * Log in and out. The form posts the admin token once; the answer sets the session cookie
 * (admin-auth.ts: an HMAC with an expiry, never the token) and sends the browser to the
 * overview. A refused token is logged as one line without the token, and answered 401 with
 * the form again; a client past the login throttle (token-attempts.ts) gets 429 with
 * `Retry-After` before its token is looked at. Logging in is itself a same-origin POST (a
 * forged login is refused too).
 */
import type { Hono } from 'hono';
import type { Logger } from '../web/log';
import { sessionCookieHeader, type AdminAuth } from './admin-auth';
import { crossSiteRefusal, isSameOrigin } from './guard';
import { wantsHtml } from './failures';
import { escapeHtml, frame, type FrameOptions } from './html';
import { checkUnderThrottle, throttledAnswer, throttledDetail, type TokenAttempts } from './token-attempts';
import { readBoundedBody } from '../web/body';

/** Far above any admin token: the form's body is read whole. */
const LOGIN_BODY_LIMIT = 4096;

export interface LoginOptions {
  readonly auth: AdminAuth;
  readonly now: () => number;
  readonly log: Logger;
  readonly base: string;
  readonly frameOptions: FrameOptions;
  readonly attempts: TokenAttempts;
}

function loginPage(options: LoginOptions, message?: string): string {
  const note = message ? `<p class="error">${escapeHtml(message)}</p>` : '';
  const form =
    `${note}<form method="post" action="${escapeHtml(options.base)}/login">` +
    `<label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label> ` +
    `<button type="submit">Log in</button></form>`;
  return frame('Log in', form, { ...options.frameOptions, bare: true });
}

async function presentedToken(request: Request): Promise<string | undefined> {
  // Counted as it streams: a chunked body without a Content-Length is never held whole.
  const body = await readBoundedBody(request, LOGIN_BODY_LIMIT);
  if (!body.ok) return undefined;
  return new URLSearchParams(new TextDecoder().decode(body.bytes)).get('token') ?? undefined;
}

export function mountLogin(app: Hono, options: LoginOptions): void {
  const { auth, now, log, base } = options;
  app.get('/login', (c) => c.html(loginPage(options)));
  app.post('/login', async (c) => {
    if (!isSameOrigin(c)) return crossSiteRefusal(c);
    const token = await presentedToken(c.req.raw);
    const checked = await checkUnderThrottle(c, options.attempts, 'login', async () => token !== undefined && (await auth.checkToken(token)));
    if (checked.outcome === 'throttled') {
      const retryAfter = String(checked.retryAfterSeconds);
      if (!wantsHtml(c)) return throttledAnswer(c, checked.retryAfterSeconds);
      return c.html(loginPage(options, throttledDetail(checked.retryAfterSeconds)), 429, { 'retry-after': retryAfter });
    }
    if (checked.outcome === 'wrong') {
      log.warn('dashboard login refused', { detail: { reason: token === undefined ? 'no token' : 'token not recognised' } });
      return c.html(loginPage(options, 'Admin token not recognised.'), 401);
    }
    const secure = new URL(c.req.url).protocol === 'https:';
    c.header('set-cookie', sessionCookieHeader(await auth.issueSession(now()), { path: base, secure }));
    return c.redirect(base, 303);
  });
  app.post('/logout', (c) => {
    if (!isSameOrigin(c)) return crossSiteRefusal(c);
    c.header('set-cookie', sessionCookieHeader('', { path: base, secure: new URL(c.req.url).protocol === 'https:' }));
    return c.redirect(`${base}/login`, 303);
  });
}
