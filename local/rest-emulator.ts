/**
 * The REST emulator: a small server speaking the Upstash REST protocol in front of a real
 * Redis, so the REST port (and `@upstash/redis`) run against real Redis — the Worker under
 * `wrangler dev` (`saga-streams rest-emulator`, see cli/commands/rest-emulator.ts), and the
 * test suites (SPEC §12). A development tool, not for production: no TLS, one token, one
 * connection to Redis.
 *
 * Protocol (what @upstash/redis 1.39 sends, and what Upstash answers):
 * - `POST /`            body `["CMD", "arg", ...]`        → `{"result": r}`, or HTTP 400 `{"error": "<Redis error>"}`
 * - `POST /pipeline`    body `[["CMD", ...], ...]`         → `[{"result": r} | {"error": e}, ...]`, ordered, not atomic
 * - `POST /multi-exec`  same body, run in MULTI/EXEC         → same shape; HTTP 400 `{"error"}` when Redis aborts it
 * - `Authorization: Bearer <token>` on every request, else HTTP 401
 *   `{"error": "WRONGPASS invalid or missing auth token"}` and nothing runs.
 * - `Upstash-Encoding: base64`: as Upstash documents it ("all strings in the response will be
 *   base64 encoded, except for the OK response"): a result that is the status reply `OK` is
 *   sent as `"OK"`; every other string — bulk strings (even one holding the text OK), other
 *   status replies (PONG), strings nested in arrays — is base64 of its exact bytes. Integers
 *   stay numbers, nil stays null, arrays nest. Without the header strings are sent as UTF-8
 *   text (lossy for binary values, as on Upstash). An error nested in an array (EXEC, a Lua
 *   table) becomes `{"error": ...}` in its place; the port refuses that shape.
 * - Redis is reached over a raw RESP connection (resp-connection.ts), because telling the
 *   status `+OK` from the bulk string `OK` is the point of the encoding rule.
 * - Blocking commands (BLPOP…, XREAD/XREADGROUP … BLOCK) are refused with an error reply,
 *   as Upstash does; this also makes any test that sends one fail loudly.
 * - Diagnostics: `GET /__stats` (same token) → `{"requests": n, "byPath": {...}}`, the count
 *   of command requests received, so tests in worker processes can assert HTTP round
 *   trips. Counts are exact only when no one else uses the server at the same time:
 *   start a dedicated server (`startRestServer`) for such assertions.
 *
 * Not implemented: the GET `/cmd/arg/...` URL form, `_token` query parameter, SSE.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReplyError, RespConnection, Status, type Reply } from './resp-connection';

export const REST_AUTH_ERROR = 'WRONGPASS invalid or missing auth token';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const BLOCKING_COMMANDS = new Set(['BLPOP', 'BRPOP', 'BRPOPLPUSH', 'BLMOVE', 'BLMPOP', 'BZPOPMIN', 'BZPOPMAX', 'BZMPOP', 'WAIT', 'WAITAOF']);

export interface RestServerOptions {
  /** The Redis to forward to, e.g. `redis://127.0.0.1:6379`. */
  readonly redisUrl: string;
  readonly token: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
}

export interface RestStats {
  /** Command requests received (`/`, `/pipeline`, `/multi-exec`, refused ones included). */
  readonly requests: number;
  readonly byPath: Readonly<Record<string, number>>;
}

export interface RestServer {
  /** Base URL for `new Redis({ url, token })`, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  stats(): RestStats;
  close(): Promise<void>;
}

type Command = string[];
type Slot = { result: unknown } | { error: string };

class HttpFailure extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function isCommand(value: unknown): value is Array<string | number> {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number');
}

function blockingName(cmd: Command): string | undefined {
  const name = cmd[0]!.toUpperCase();
  if (BLOCKING_COMMANDS.has(name)) return name;
  if (name !== 'XREAD' && name !== 'XREADGROUP') return undefined;
  for (const arg of cmd.slice(1)) {
    const word = arg.toUpperCase();
    if (word === 'STREAMS') return undefined;
    if (word === 'BLOCK') return `${name} BLOCK`;
  }
  return undefined;
}

const base64Of = (bytes: Buffer) => bytes.toString('base64');

/** One element of a result: every string base64 (or UTF-8 text without the header). */
function encodeNested(value: Reply, base64: boolean): unknown {
  if (value instanceof Status) return base64 ? base64Of(Buffer.from(value.text)) : value.text;
  if (Buffer.isBuffer(value)) return base64 ? base64Of(value) : value.toString('utf8');
  if (value instanceof ReplyError) return { error: value.message };
  if (Array.isArray(value)) return value.map((v) => encodeNested(v, base64));
  return value;
}

/** A whole result: as nested, except that the status reply OK itself stays "OK". */
function encodeResult(value: Reply, base64: boolean): unknown {
  return value instanceof Status && value.text === 'OK' ? 'OK' : encodeNested(value, base64);
}

function slotOf(reply: Reply, base64: boolean): Slot {
  return reply instanceof ReplyError ? { error: reply.message } : { result: encodeResult(reply, base64) };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, 'ERR request body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'ERR failed to parse command: body is not JSON');
  }
}

function commandsOf(body: unknown, many: boolean): Command[] {
  const list = many ? body : [body];
  if (!Array.isArray(list) || list.length === 0 || !list.every(isCommand)) {
    throw new HttpFailure(400, `ERR failed to parse command: expected ${many ? 'an array of commands' : 'a command array'}`);
  }
  return list.map((cmd) => cmd.map(String));
}

export async function startRestServer(options: RestServerOptions): Promise<RestServer> {
  // Its Redis may be stopped on purpose by a test: a request then fails with HTTP 500.
  const redis = new RespConnection(options.redisUrl);
  const expected = digest(`Bearer ${options.token}`);
  const byPath: Record<string, number> = {};
  let requests = 0;

  const authorized = (req: IncomingMessage) => timingSafeEqual(digest(req.headers.authorization ?? ''), expected);

  async function runPipeline(cmds: Command[], base64: boolean): Promise<Slot[]> {
    return (await redis.send(cmds)).map((reply) => slotOf(reply, base64));
  }

  async function runMulti(cmds: Command[], base64: boolean): Promise<Slot[]> {
    const replies = await redis.send([['MULTI'], ...cmds, ['EXEC']]);
    const exec = replies.at(-1)!;
    if (exec instanceof ReplyError) throw new HttpFailure(400, exec.message);
    if (!Array.isArray(exec)) throw new HttpFailure(400, 'EXECABORT transaction discarded');
    return exec.map((reply) => slotOf(reply, base64));
  }

  async function answer(req: IncomingMessage, path: string): Promise<[number, unknown]> {
    if (req.method === 'GET' && path === '/__stats') {
      if (!authorized(req)) return [401, { error: REST_AUTH_ERROR }];
      return [200, { requests, byPath: { ...byPath } }];
    }
    if (req.method !== 'POST' || !['/', '/pipeline', '/multi-exec'].includes(path)) {
      return [404, { error: `ERR unsupported endpoint ${req.method} ${path}` }];
    }
    requests += 1;
    byPath[path] = (byPath[path] ?? 0) + 1;
    if (!authorized(req)) return [401, { error: REST_AUTH_ERROR }];
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const cmds = commandsOf(await readJson(req), path !== '/');
    const refused = cmds.map(blockingName);
    if (path === '/multi-exec' && refused.some(Boolean)) {
      return [400, { error: `ERR blocking commands are not supported over REST (${refused.find(Boolean)})` }];
    }
    if (path === '/') {
      if (refused[0]) return [400, { error: `ERR blocking commands are not supported over REST (${refused[0]})` }];
      const [slot] = await runPipeline(cmds, base64);
      return 'error' in slot! ? [400, slot] : [200, slot];
    }
    if (path === '/multi-exec') return [200, await runMulti(cmds, base64)];
    // Pipeline: run what may run, refuse blocking ones in their slots, keep the order.
    const allowed = cmds.filter((_, i) => !refused[i]);
    const ran = allowed.length > 0 ? await runPipeline(allowed, base64) : [];
    let next = 0;
    return [200, refused.map((name) => (name ? { error: `ERR blocking commands are not supported over REST (${name})` } : ran[next++]!))];
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://rest').pathname;
    answer(req, path)
      .catch((error: unknown): [number, unknown] =>
        error instanceof HttpFailure ? [error.status, { error: error.message }] : [500, { error: `ERR ${(error as Error).message}` }],
      )
      .then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ requests, byPath: { ...byPath } }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.close();
    },
  };
}

/** Reads `GET /__stats` of a server running in another process. */
export async function fetchRestStats(url: string, token: string): Promise<RestStats> {
  const res = await fetch(`${url}/__stats`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /__stats answered HTTP ${res.status}`);
  return (await res.json()) as RestStats;
}
