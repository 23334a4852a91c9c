/**
 * Connection failures in the user's words: which server (host:port — never the URL, whose
 * userinfo may hold a password) and what happened to it (refused, timed out, closed),
 * instead of the client's internals ("Reached the max retries per request limit (which
 * is 0)" is how ioredis says a command found no connection). A command failing for want of
 * a connection carries no cause of its own, so the connection's last error, kept by the
 * port, tells refused from timed out.
 */

/** `host:port` of a standalone URL (default port 6379), or the socket path; no credentials. */
export function redisTarget(url: string): string {
  try {
    const parsed = new URL(withoutCredentials(url));
    if (parsed.protocol === 'unix:') return parsed.pathname;
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * A Redis URL (or bare host:port) without anything that may hold a secret, before anything
 * parses it: the query and fragment go first (some clients take `?password=`), then the user
 * and password, cut at the last `@` — a password holding `/` would otherwise end a parser's
 * authority early, and its tail would come back as the host or the path. A URL that is left
 * unparsable by this is reported as such, never with its pieces.
 */
export function withoutCredentials(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? 'redis://';
  const rest = (url.startsWith(scheme) ? url.slice(scheme.length) : url).replace(/[?#].*$/s, '');
  return `${scheme}${rest.slice(rest.lastIndexOf('@') + 1)}`;
}

/** The system error code, also inside ioredis' ClusterAllFailedError (its last node's error). */
function codeOf(error: unknown): string | undefined {
  const { code, lastNodeError } = (error ?? {}) as { code?: unknown; lastNodeError?: unknown };
  if (typeof code === 'string') return code;
  return lastNodeError === undefined ? undefined : codeOf(lastNodeError);
}

// The codes users meet; any other error keeps its own message. (Short on purpose: this ships
// in every TCP Lambda bundle, whose size is budgeted.)
const CLOSED = 'closed the connection';
const WHAT_HAPPENED: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'refused the connection',
  ETIMEDOUT: 'timed out connecting',
  ECONNRESET: CLOSED,
  EPIPE: CLOSED,
  ENOTFOUND: 'is not a known host',
};

/**
 * One line for a failed exchange: `where` is the target, `error` what the command failed
 * with, `connectionError` the connection's last error since it was last ready.
 */
export function describeConnectionFailure(where: string, error: unknown, connectionError: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const known = WHAT_HAPPENED[codeOf(error) ?? ''] ?? WHAT_HAPPENED[codeOf(connectionError) ?? ''];
  // The port's own bound (time-limit.ts) ran out: the connection's failure says why, if it
  // failed (a Cluster keeps retrying refused nodes until then); else the server never answered.
  if (/^no reply within \d+ ms$/.test(message)) return known ? `${where} ${known} (${message})` : `${where} timed out (${message})`;
  if (known) return `${where} ${known}`;
  // ioredis fails queued commands with "max retries" when the connection closes under them.
  if (/connection is closed|stream isn't writeable|max retries per request/i.test(message)) return `${where} ${CLOSED}`;
  return `${where}: ${message}`;
}
