/**
 * RedisPort over ioredis (TCP), standalone or Cluster. Commands go out as one pipeline per
 * exchange and come back as Buffers, so payloads are binary-safe.
 */
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { RedisCommandError, RedisUnavailableError } from '../errors';
import type { RedisArg, RedisCommand, RedisPort, RedisReply } from './port';

/**
 * Fail fast instead of queueing and re-sending: a command whose outcome is unknown must
 * surface as an error so the round aborts and its entries stay pending, rather than be
 * replayed silently by the client after a reconnect.
 */
export const IOREDIS_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 5_000,
  lazyConnect: false,
};

type Client = Redis | Cluster;

function toBuffer(arg: RedisArg): string | number | Buffer {
  if (arg instanceof Uint8Array && !Buffer.isBuffer(arg)) {
    return Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength);
  }
  return arg as string | number | Buffer;
}

function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

function unavailable(error: unknown): RedisUnavailableError {
  const reason = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`redis unreachable: ${reason}`, { cause: error });
}

class IoredisPort implements RedisPort {
  readonly transport = 'tcp' as const;
  readonly cluster: boolean;

  constructor(private readonly client: Client, private readonly owned: boolean) {
    this.cluster = client instanceof Cluster;
    // Connection errors reach callers through the commands that fail; without a listener
    // ioredis would also print each one as an "Unhandled error event".
    if (owned) client.on('error', () => {});
  }

  async exchange(commands: readonly RedisCommand[]): Promise<Array<RedisReply | RedisCommandError>> {
    const pipeline = this.client.pipeline();
    for (const cmd of commands) pipeline.callBuffer(cmd.name, ...cmd.args.map(toBuffer));
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (error) {
      throw unavailable(error);
    }
    if (!results) throw unavailable(new Error('pipeline was discarded'));
    return results.map(([error, value], i) => {
      if (!error) return value as RedisReply;
      if (isReplyError(error)) return new RedisCommandError(commands[i]!.name, error.message);
      throw unavailable(error);
    });
  }

  async close(): Promise<void> {
    if (!this.owned) return;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}

/** Wraps a client you manage; `close()` leaves it open. */
export function ioredisPort(client: Client): RedisPort {
  return new IoredisPort(client, false);
}

/** Connects to a standalone server, e.g. `redis://:password@127.0.0.1:6379/0`. */
export function connectIoredis(url: string, options: RedisOptions = {}): RedisPort {
  return new IoredisPort(new Redis(url, { ...IOREDIS_DEFAULTS, ...options }), true);
}

export function connectIoredisCluster(nodes: ClusterNode[], options: ClusterOptions = {}): RedisPort {
  const redisOptions = { ...IOREDIS_DEFAULTS, ...options.redisOptions };
  return new IoredisPort(new Cluster(nodes, { enableOfflineQueue: true, ...options, redisOptions }), true);
}
