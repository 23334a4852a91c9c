/**
 * The one Upstash REST request the port makes, per Upstash's documented protocol:
 * `POST <url>/pipeline`, a JSON array of commands (each an array of strings), headers
 * `Authorization: Bearer <token>` and `Upstash-Encoding: base64`; the answer is HTTP 200 with
 * one `{"result": …}` or `{"error": "…"}` per command, in order (ordered, not atomic).
 *
 * Why not @upstash/redis (1.39): its public API cannot carry our exchanges. A pipeline takes
 * only its typed per-command methods (the generic `chain` is private; `redis.exec` is one
 * command per request), which re-serialize arguments and reshape replies per command; the
 * Node client does not pass custom headers through, so replies are either decoded by it
 * (base64 → UTF-8 text: non-UTF-8 bytes lost) or sent as UTF-8 text by the server; and a
 * non-2xx answer surfaces only as error text, without its HTTP status. Reaching its
 * protected HTTP layer (as this port used to) is not public API either.
 *
 * Failures are typed by structured signals, never by message text: the request failing or
 * timing out, and any non-2xx status, are RedisUnavailableError (401/403: the token was
 * refused); a 200 that is not a slot per command is ReplyShapeError. Exactly one attempt —
 * a lost answer must surface, not be re-sent: the commands may have run.
 */
import { RedisUnavailableError, ReplyShapeError } from '../ground/errors';

export interface RestSlot {
  readonly result?: unknown;
  readonly error?: unknown;
}

export interface RestEndpoint {
  readonly url: string;
  readonly token: string;
  /** Abort a request with no complete answer after this long. */
  readonly timeoutMs: number;
}

const AUTH_REFUSED = new Set([401, 403]);
/** Upstash's read-your-writes token: echoed back so a read never misses our own writes. */
const SYNC_TOKEN = 'upstash-sync-token';

function unavailable(reason: string, cause?: unknown): RedisUnavailableError {
  return new RedisUnavailableError(`upstash REST request failed: ${reason}`, cause === undefined ? undefined : { cause });
}

/** The `error` string of a refusal body, if it has one (for the message only). */
function errorTextOf(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

function refusal(status: number, body: string): RedisUnavailableError {
  const text = errorTextOf(body);
  const detail = text === undefined ? `HTTP ${status}` : `HTTP ${status}: ${text}`;
  return unavailable(AUTH_REFUSED.has(status) ? `the server refused the token (${detail})` : detail);
}

function slotsOf(body: string, count: number): RestSlot[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ReplyShapeError('upstash pipeline answer that is not JSON');
  }
  if (!Array.isArray(parsed) || parsed.length !== count) {
    throw new ReplyShapeError(`upstash pipeline answered ${Array.isArray(parsed) ? parsed.length : 'no'} replies for ${count} commands`);
  }
  return parsed as RestSlot[];
}

export class RestPipelineClient {
  readonly #endpoint: RestEndpoint;
  #syncToken = '';

  constructor(endpoint: RestEndpoint) {
    this.#endpoint = endpoint;
  }

  /** Sends the commands in one request; their slots in order. */
  async pipeline(commands: readonly string[][]): Promise<RestSlot[]> {
    const { url, token, timeoutMs } = this.#endpoint;
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let body: string;
    try {
      const response = await fetch(`${url.replace(/\/+$/, '')}/pipeline`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'upstash-encoding': 'base64',
          ...(this.#syncToken ? { [SYNC_TOKEN]: this.#syncToken } : {}),
        },
        body: JSON.stringify(commands),
        signal,
      });
      status = response.status;
      // The same signal bounds reading the body: a stalled answer times out too.
      body = await response.text();
      if (response.ok) this.#syncToken = response.headers.get(SYNC_TOKEN) ?? this.#syncToken;
    } catch (error) {
      if (signal.aborted) throw unavailable(`no answer within ${timeoutMs} ms`, error);
      throw unavailable(error instanceof Error ? error.message : String(error), error);
    }
    if (status < 200 || status > 299) throw refusal(status, body);
    return slotsOf(body, commands.length);
  }
}
