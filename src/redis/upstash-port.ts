/**
 * RedisPort over the Upstash REST protocol (for edge runtimes). One exchange is exactly one
 * HTTP request to `POST /pipeline` (upstash-http.ts), even for a single command: there a
 * command Redis refused comes back in its slot with HTTP 200, so anything else is the
 * request itself failing (RedisUnavailableError). Ordered, not atomic — the same promise an
 * ioredis pipeline makes.
 *
 * Replies are requested base64-encoded and decoded by Upstash's exact rule to bytes
 * (upstash-reply.ts), so reads are byte-exact even for non-UTF-8 values; writes carry JSON
 * strings and therefore only UTF-8 (see utf8.ts). REST cannot block: a blocking command is
 * refused before anything is sent.
 */
import { ConfigError, RedisCommandError, ReplyShapeError, SagaStreamsError } from '../ground/errors';
import { EXCHANGE_TIMEOUT_MS, type RedisArg, type RedisCommand, type RedisPort, type RedisReply } from './port';
import { RestPipelineClient, type RestSlot } from './upstash-http';
import { decodeRestReply } from './upstash-reply';
import { exactUtf8Text } from '../ground/text';
import { RestPayloadNotUtf8Error } from './utf8';

export { decodeRestReply } from './upstash-reply';

export interface UpstashConnection {
  /** REST URL, e.g. `https://eu1-xyz.upstash.io` (UPSTASH_REDIS_REST_URL). */
  readonly url: string;
  /** REST token (UPSTASH_REDIS_REST_TOKEN). Never logged or echoed. */
  readonly token: string;
  /** Abort a request with no answer after this long (default EXCHANGE_TIMEOUT_MS). */
  readonly exchangeTimeoutMs?: number;
}

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

function replyOf(slot: RestSlot, name: string): RedisReply | RedisCommandError {
  if (typeof slot !== 'object' || slot === null) throw new ReplyShapeError(`upstash reply for ${name} is not an object`);
  if (typeof slot.error === 'string') return new RedisCommandError(name, slot.error);
  if (!('result' in slot)) throw new ReplyShapeError(`upstash reply for ${name} has neither result nor error`);
  return decodeRestReply(slot.result);
}

class UpstashPort implements RedisPort {
  readonly transport = 'rest' as const;
  readonly cluster = false;
  /** Private field: util.inspect and JSON.stringify of the port never reach the token. */
  readonly #client: RestPipelineClient;

  constructor(client: RestPipelineClient) {
    this.#client = client;
  }

  async exchange(commands: readonly RedisCommand[]): Promise<Array<RedisReply | RedisCommandError>> {
    const bodies = commands.map(restBody);
    if (bodies.length === 0) return [];
    const slots = await this.#client.pipeline(bodies);
    return slots.map((slot, i) => replyOf(slot, commands[i]!.name));
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
 * on a missing URL or token.
 *
 * @example
 * const port = connectUpstash({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
 */
export function connectUpstash(connection: UpstashConnection): RedisPort {
  const problems = connectionProblems(connection);
  if (problems.length > 0) throw new ConfigError('upstash connection', problems);
  const timeoutMs = connection.exchangeTimeoutMs ?? EXCHANGE_TIMEOUT_MS;
  return new UpstashPort(new RestPipelineClient({ url: connection.url, token: connection.token, timeoutMs }));
}
