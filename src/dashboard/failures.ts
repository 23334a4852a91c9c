/**
 * What the dashboard answers when it cannot answer: Redis unreachable or frozen → 503 (an HTML
 * page for a browser, problem+json otherwise) within REDIS_WAIT_MS, and one log line; anything
 * else → a 500 that shows no message and no stack. Every Redis exchange of the dashboard — its
 * sections' included — goes through `boundedPort`, so a frozen Redis is a quick 503, never a
 * page that hangs until the platform kills it.
 */
import type { Context } from 'hono';
import { errorCode, RedisUnavailableError } from '../ground/errors';
import { describeError, type Logger } from '../web/log';
import { problemResponse, Problems, RETRY_AFTER_SECONDS, type ProblemCode } from '../web/problems';
import type { RedisPort } from '../redis/port';
import { withTimeLimit } from '../ground/time-limit';
import { escapeHtml } from './html';

/** Longest wait for one Redis exchange of a dashboard request (the 503 comes within ~1.5 s). */
export const REDIS_WAIT_MS = 1_200;

export function boundedPort(port: RedisPort, ms = REDIS_WAIT_MS): RedisPort {
  const expired = () => new RedisUnavailableError(`redis unreachable: no reply within ${ms} ms`);
  return {
    transport: port.transport,
    cluster: port.cluster,
    exchange: (commands) => withTimeLimit(port.exchange(commands), ms, expired),
    close: () => port.close(),
  };
}

export function wantsHtml(c: Context): boolean {
  return (c.req.header('accept') ?? '').includes('text/html');
}

const HEADERS = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };

/** A minimal page of its own: the page frame needs nothing from Redis, but stays out of error paths. */
function errorPage(status: number, title: string, detail: string): Response {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font:14px system-ui,sans-serif;margin:2em"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p></body></html>`;
  const headers = new Headers(HEADERS);
  if (status === 503) headers.set('retry-after', String(RETRY_AFTER_SECONDS));
  return new Response(body, { status, headers });
}

/** A problem answer in the form the client asked for: its status is the code's. */
export function failure(c: Context, code: ProblemCode, title: string, detail: string): Response {
  return wantsHtml(c) ? errorPage(Problems[code].status, title, detail) : problemResponse(code, detail);
}

export function dashboardError(c: Context, error: unknown, log: Logger): Response {
  if (errorCode(error) === 'REDIS_UNAVAILABLE') {
    log.error('dashboard: redis unavailable', { error: describeError(error), detail: { path: c.req.path } });
    return failure(c, 'redis_unavailable', 'Redis unavailable', 'The dashboard cannot reach Redis right now. Try again in a few seconds.');
  }
  log.error('dashboard request failed', { error: describeError(error), detail: { path: c.req.path } });
  return failure(c, 'internal_error', 'Internal error', 'The dashboard failed to answer; its log says why.');
}
