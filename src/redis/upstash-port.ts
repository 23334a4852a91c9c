/**
 * RedisPort over @upstash/redis (REST, for edge runtimes). One exchange is exactly one
 * HTTP request: a single command goes to `POST /`, several to `POST /pipeline` (ordered,
 * not atomic — the same promise an ioredis pipeline makes).
 *
 * The client is used for its HTTP layer (auth header, fetch, read-your-writes token) with
 * every convenience that would make the two clients disagree turned off: no JSON
 * deserialization (a Lua reply "123" stays bytes), no auto-pipelining (it would merge our
 * requests with others), no telemetry headers, no retries (a lost response must surface as
 * an error, not be re-sent: the command may have run). Replies are requested base64-encoded
 * and decoded here to bytes, so reads are byte-exact even for non-UTF-8 values; writes
 * carry JSON strings and therefore only UTF-8 (see utf8.ts). REST cannot block: a blocking
 * command is refused before anything is sent.
 */
import { Redis, type UpstashRequest, type UpstashResponse } from '@upstash/redis';
import { ConfigError, RedisCommandError, RedisUnavailableError, ReplyShapeError, SagaStreamsError } from '../errors';
import { EXCHANGE_TIMEOUT_MS, type RedisArg, type RedisCommand, type RedisPort, type RedisReply } from './port';
import { exactUtf8Text, RestPayloadNotUtf8Error } from './utf8';

export interface UpstashConnection {
  /** REST URL, e.g. `https://eu1-xyz.upstash.io` (UPSTASH_REDIS_REST_URL). */
  readonly url: string;
  /** REST token (UPSTASH_REDIS_REST_TOKEN). Never logged or echoed. */
  readonly token: string;
  /** Abort a request with no answer after this long (default EXCHANGE_TIMEOUT_MS). */
  readonly exchangeTimeoutMs?: number;
}

/** Asked per request, so the client hands us the base64 text instead of lossy UTF-8. */
const BASE64_REPLIES = { 'Upstash-Encoding': 'base64' } as const;
/** Error replies that mean the token itself was refused (NOPERM is per command: a command error). */
const AUTH_REFUSALS = new Set(['WRONGPASS', 'NOAUTH']);
const BLOCKING_COMMANDS = new Set(['BLPOP', 'BRPOP', 'BRPOPLPUSH', 'BLMOVE', 'BLMPOP', 'BZPOPMIN', 'BZPOPMAX', 'BZMPOP', 'WAIT', 'WAITAOF']);

/** A command REST cannot run (it would hold an HTTP request open); nothing was sent. */
export class RestBlockingCommandError extends SagaStreamsError {
  readonly command: string;

  constructor(command: string) {
    super(
      'REST_BLOCKING_UNSUPPORTED',
      `${command} would block, and the REST transport (Upstash) cannot run blocking commands; ` +
        'continuous runs over REST sleep between empty rounds instead',
    );
    this.command = command;
  }
}

/** The client's HTTP layer is protected; this subclass is the one place that reaches it. */
class RestClient extends Redis {
  send<T>(request: UpstashRequest): Promise<T> {
    return this.client.request(request) as Promise<T>;
  }
}

const BASE64_TEXT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextEncoder();

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * A base64-encoded REST reply as the port's reply type: strings to their exact bytes,
 * integers as numbers, nil as null, arrays element by element. A string that is not
 * base64 (Upstash sends the status `OK` as is) is taken as text, as the client does.
 */
export function decodeRestReply(raw: unknown): RedisReply {
  if (raw === null || typeof raw === 'number') return raw;
  if (typeof raw === 'string') return BASE64_TEXT.test(raw) ? base64Bytes(raw) : utf8.encode(raw);
  if (Array.isArray(raw)) return raw.map(decodeRestReply);
  throw new ReplyShapeError(`upstash reply value of type ${typeof raw}`);
}

function isBlocking(cmd: RedisCommand): boolean {
  const name = cmd.name.toUpperCase();
  if (BLOCKING_COMMANDS.has(name)) return true;
  if (name !== 'XREAD' && name !== 'XREADGROUP') return false;
  // Options precede STREAMS; after it come key names and ids, which may be anything.
  for (const arg of cmd.args) {
    const word = typeof arg === 'string' ? arg.toUpperCase() : '';
    if (word === 'STREAMS') return false;
    if (word === 'BLOCK') return true;
  }
  return false;
}

function restArg(arg: RedisArg, index: number, cmd: RedisCommand): string {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'number') return String(arg);
  const text = exactUtf8Text(arg);
  if (text === undefined) throw new RestPayloadNotUtf8Error(`argument ${index + 1} of ${cmd.name}`);
  return text;
}

function restBody(cmd: RedisCommand): string[] {
  if (isBlocking(cmd)) throw new RestBlockingCommandError(cmd.name);
  return [cmd.name, ...cmd.args.map((arg, i) => restArg(arg, i, cmd))];
}

function unavailable(reason: string, cause?: unknown): RedisUnavailableError {
  return new RedisUnavailableError(`upstash REST request failed: ${reason}`, cause === undefined ? undefined : { cause });
}

/**
 * The client throws for a non-2xx answer with `<error>, command was: <JSON body>`; we know
 * the body, so the error reply is exactly what precedes that suffix. An error that is not
 * of this shape (network, unparsable body) means the request itself failed.
 */
function errorReplyOf(error: unknown, body: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'UpstashError') return undefined;
  const suffix = `, command was: ${JSON.stringify(body)}`;
  return error.message.endsWith(suffix) ? error.message.slice(0, -suffix.length) : undefined;
}

function isTokenRefusal(reply: string): boolean {
  return AUTH_REFUSALS.has(reply.split(' ', 1)[0] ?? '');
}

function refusedOrFailed(error: unknown, body: unknown): RedisUnavailableError {
  const reply = errorReplyOf(error, body);
  if (reply !== undefined && isTokenRefusal(reply)) return unavailable(`the server refused the token (${reply})`);
  if (reply !== undefined) return unavailable(reply);
  return unavailable(error instanceof Error ? error.message : String(error), error);
}

function replyOf(item: UpstashResponse<unknown> | undefined, name: string): RedisReply | RedisCommandError {
  if (typeof item?.error === 'string') return new RedisCommandError(name, item.error);
  if (item === undefined || !('result' in item)) throw new ReplyShapeError(`upstash reply for ${name} has neither result nor error`);
  return decodeRestReply(item.result);
}

class UpstashPort implements RedisPort {
  readonly transport = 'rest' as const;
  readonly cluster = false;
  /** Private field: util.inspect and JSON.stringify of the port never reach the token. */
  readonly #client: RestClient;

  constructor(client: RestClient) {
    this.#client = client;
  }

  /**
   * Every exchange goes to /pipeline, even a single command: there a command Redis refused
   * comes back in its slot with HTTP 200, so any thrown error is the request itself (429,
   * 5xx, network) and maps to RedisUnavailableError. On `/` both arrive as thrown errors
   * with the same shape, and an outage could pass for a command error.
   */
  async exchange(commands: readonly RedisCommand[]): Promise<Array<RedisReply | RedisCommandError>> {
    const bodies = commands.map(restBody);
    if (bodies.length === 0) return [];
    return this.pipeline(commands, bodies);
  }

  private async pipeline(commands: readonly RedisCommand[], bodies: string[][]): Promise<Array<RedisReply | RedisCommandError>> {
    let response: unknown;
    try {
      response = await this.#client.send({ path: ['pipeline'], body: bodies, headers: BASE64_REPLIES });
    } catch (error) {
      // Command errors come back in their slots with HTTP 200; a thrown error is the whole request.
      throw refusedOrFailed(error, bodies);
    }
    if (!Array.isArray(response) || response.length !== commands.length) {
      throw new ReplyShapeError(`upstash pipeline answered ${Array.isArray(response) ? response.length : 'no'} replies for ${commands.length} commands`);
    }
    return response.map((item: UpstashResponse<unknown>, i) => replyOf(item, commands[i]!.name));
  }

  async close(): Promise<void> {
    // Stateless HTTP: nothing to close.
  }
}

function connectionProblems(connection: UpstashConnection): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  if (typeof connection.url !== 'string' || !/^https?:\/\/[^\s/?#]+\S*$/.test(connection.url)) {
    problems.push({ path: 'url', message: 'must be an http(s) URL without spaces' });
  }
  if (typeof connection.token !== 'string' || connection.token.length === 0 || /\s/.test(connection.token)) {
    problems.push({ path: 'token', message: 'must be a non-empty token without whitespace' });
  }
  return problems;
}

/**
 * Connects to an Upstash (or Upstash-protocol) REST endpoint. Fails fast with ConfigError
 * on a missing URL or token instead of the client's warn-and-continue.
 *
 * @example
 * const port = connectUpstash({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
 */
export function connectUpstash(connection: UpstashConnection): RedisPort {
  const problems = connectionProblems(connection);
  if (problems.length > 0) throw new ConfigError('upstash connection', problems);
  const client = new RestClient({
    url: connection.url,
    token: connection.token,
    automaticDeserialization: false,
    enableAutoPipelining: false,
    enableTelemetry: false,
    // Replies stay base64 text; we ask for the encoding per request and decode to bytes.
    responseEncoding: false,
    // `retry: false` still tries twice in 1.39.0; zero retries means exactly one attempt.
    retry: { retries: 0 },
    // A fresh signal per request: a stalled request fails as unavailable instead of hanging.
    signal: () => AbortSignal.timeout(connection.exchangeTimeoutMs ?? EXCHANGE_TIMEOUT_MS),
  });
  return new UpstashPort(client);
}
