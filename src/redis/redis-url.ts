/**
 * Reading the Redis URL variable (REDIS_URL): one URL, or for a Cluster a comma-separated
 * list of nodes. A password may hold `,` (RFC 3986 allows it in userinfo), so a list is not
 * split at every comma: a node written with a scheme keeps every comma up to the last `@`
 * before the next node that starts with a scheme — the reading in which no host (which error
 * messages show) can be a piece of the password. Credentials therefore go on the first node
 * (they apply to every node); a later node with credentials of its own starts with a scheme.
 * A value that does not parse fails naming the variable, never with its text: Node's URL
 * error carries the whole input (`error.input`), password included.
 */
import { ConfigError, type ConfigProblem } from '../ground/errors';

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const SUBJECT = 'redis connection';
const NOT_SHOWN = '(the value is not shown: it may hold a password)';

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** What a Cluster list says: its seed nodes, and the first node's credentials and TLS. */
export interface ClusterSeeds {
  readonly nodes: readonly RedisNode[];
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

/** The nodes of a Cluster list, each as written (credentials kept; see the file comment). */
export function splitNodeList(value: string): string[] {
  return runsOf(value.split(',')).flatMap(nodesOfRun);
}

/** Segments grouped into runs: a segment that starts with a scheme (or the first) and the bare ones after it. */
function runsOf(segments: readonly string[]): string[][] {
  const runs: string[][] = [];
  for (const segment of segments) {
    const current = runs.at(-1);
    if (current === undefined || SCHEME.test(segment)) runs.push([segment]);
    else current.push(segment);
  }
  return runs;
}

/**
 * The run's first node takes every segment up to the run's last `@` (its userinfo may hold
 * commas); a query or fragment (`?`, `#`: they may hold a password too) takes the rest.
 */
function nodesOfRun(run: readonly string[]): string[] {
  const lastAt = Math.max(0, run.findLastIndex((segment) => segment.includes('@')));
  const nodes = [run.slice(0, lastAt + 1).join(','), ...run.slice(lastAt + 1)];
  const query = nodes.findIndex((node) => /[?#]/.test(node));
  return query < 0 ? nodes : [...nodes.slice(0, query), nodes.slice(query).join(',')];
}

/** The node as a URL (bare `host:port` read as `redis://`), or undefined — never an error carrying its text. */
function parseNode(text: string): URL | undefined {
  try {
    const url = new URL(SCHEME.test(text) ? text : `redis://${text}`);
    if (url.hostname === '') return undefined;
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return url;
  } catch {
    return undefined;
  }
}

/** Seeds of a Cluster list, or a ConfigError naming `variable` and each node that does not parse. */
export function parseClusterNodes(value: string, variable: string): ClusterSeeds {
  const texts = splitNodeList(value);
  const urls = texts.map(parseNode);
  const problems: ConfigProblem[] = [];
  urls.forEach((url, index) => {
    const which = texts.length === 1 ? '' : `node ${index + 1} of ${texts.length} `;
    if (!url) problems.push({ path: variable, message: `${which}is not a valid host:port or redis:// URL ${NOT_SHOWN}` });
  });
  if (problems.length > 0) throw new ConfigError(SUBJECT, problems);
  const parsed = urls as URL[];
  const first = parsed[0]!;
  return {
    nodes: parsed.map((url) => ({ host: url.hostname, port: Number(url.port || 6379) })),
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
    tls: first.protocol === 'rediss:',
  };
}

/** The error for a standalone URL its client could not parse. */
export function unparsableRedisUrl(variable: string): ConfigError {
  return new ConfigError(SUBJECT, [{ path: variable, message: `is not a valid Redis URL ${NOT_SHOWN}` }]);
}

const REDIS_SCHEMES = new Set(['redis:', 'rediss:']);
const URL_FORM = 'redis://[user:password@]host[:port][/db] or rediss://…';

/**
 * A standalone Redis URL: `redis://` or `rediss://` with a host. Anything else fails naming
 * `variable`, never with Node's error (which carries the text) — and a value without a
 * scheme is said not to be a URL, instead of being taken for a host name (`not-a-url:6379`).
 */
export function parseRedisUrl(value: string, variable: string): URL {
  const problem = (message: string) => new ConfigError(SUBJECT, [{ path: variable, message: `${message} ${NOT_SHOWN}` }]);
  if (!SCHEME.test(value)) throw problem(`is not a URL: expected ${URL_FORM}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw unparsableRedisUrl(variable);
  }
  if (!REDIS_SCHEMES.has(url.protocol)) throw problem(`is not a Redis URL: expected ${URL_FORM}`);
  if (url.hostname === '') throw problem(`has no host: expected ${URL_FORM}`);
  return url;
}
