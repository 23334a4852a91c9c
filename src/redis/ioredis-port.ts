/**
 * RedisPort over ioredis (TCP), standalone or Cluster. The commands of an exchange go out
 * back to back on one connection (on a Cluster, the master's that serves their slot) and
 * come back as Buffers, so payloads are binary-safe.
 */
import { Cluster, Command, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { RedisCommandError, RedisUnavailableError } from '../ground/errors';
import { withTimeLimit } from '../ground/time-limit';
import { describeConnectionFailure, redisTarget } from './connection-failure';
import { EXCHANGE_TIMEOUT_MS, type BlockingReader, type RedisArg, type RedisCommand, type RedisPort, type RedisReply } from './port';

/**
 * Fail fast instead of queueing and re-sending: a command whose outcome is unknown must
 * surface as an error so the round aborts and its entries stay pending, rather than be
 * replayed silently by the client after a reconnect.
 *
 * A connection costs no command of its own (SPEC §10: serverless Redis bills per command):
 * no ready-check `INFO` (a server still loading its data answers `LOADING` to the run's
 * first command, which fails the run like any refusal: its entries stay pending) and no
 * `CLIENT SETINFO` pair (a label for `CLIENT LIST`, nothing the transport reads).
 */
export const IOREDIS_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 5_000,
  lazyConnect: false,
  enableReadyCheck: false,
  disableClientInfo: true,
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

/** A Cluster refusal that means the command did not run where it was sent (the slot is elsewhere, or moving). */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;

/** Commands of an exchange that change nothing wherever they run: sent again, they do no harm. */
const TOUCHES_NO_KEY = new Set(['MULTI', 'WAIT', 'WAITAOF']);

function redirected(error: Error | null): boolean {
  return error !== null && isReplyError(error) && REDIRECTED.test(error.message);
}

/** Redirected, or a transaction discarded (EXECABORT: one of its commands was refused when queued). */
function notRunHere(error: Error | null): boolean {
  return redirected(error) || (error !== null && isReplyError(error) && error.message.startsWith('EXECABORT '));
}

/** host:port of what the client connects to (from its parsed options: no credentials). */
function targetOf(client: Client): string {
  if (client instanceof Cluster) {
    const nodes = (client as unknown as { startupNodes?: Array<{ host?: string; port?: number } | string | number> }).startupNodes ?? [];
    // connectTcp passes {host, port}; a URL string given by a caller is reduced to host:port.
    return `cluster ${nodes.map((node) => (typeof node === 'object' ? `${node.host}:${node.port}` : redisTarget(String(node)))).join(',')}`;
  }
  const { host, port, path } = client.options;
  return path ? path : `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

/** The BLOCK milliseconds of a blocking command in the exchange (0 when none blocks). */
function blockingMs(commands: readonly RedisCommand[]): number {
  let longest = 0;
  for (const cmd of commands) {
    // Length first: a settle carries every acked id as an argument, and upper-casing each
    // one made a string per entry per exchange.
    const at = cmd.args.findIndex((arg) => typeof arg === 'string' && arg.length === 5 && arg.toUpperCase() === 'BLOCK');
    if (at >= 0) longest = Math.max(longest, Number(cmd.args[at + 1]) || 0);
  }
  return longest;
}

class IoredisPort implements RedisPort {
  readonly transport = 'tcp' as const;
  readonly cluster: boolean;
  // Private fields: the client's options hold the password, and a port must never print it
  // through util.inspect or JSON.stringify.
  readonly #client: Client;
  readonly #owned: boolean;
  readonly #timeoutMs: number;
  /** host:port (or the Cluster's seeds), for error messages. */
  readonly #where: string;
  /** The connection's last error since it was last ready: why a command found no connection. */
  #connectionError: unknown;
  /** The connection blocking reads use (SPEC §5.1 "Blocking reads"), opened on first use. */
  #blocking: IoredisBlockingReader | undefined;

  constructor(client: Client, owned: boolean, timeoutMs: number) {
    this.#client = client;
    this.#owned = owned;
    this.#timeoutMs = timeoutMs;
    this.cluster = client instanceof Cluster;
    this.#where = targetOf(client);
    // Connection errors reach callers through the commands that fail; without a listener
    // ioredis would also print each one as an "Unhandled error event". A client the caller
    // passed in keeps its own error handling (any listener would silence that warning).
    if (owned) {
      client.on('error', (error: unknown) => (this.#connectionError = error));
      client.on('ready', () => (this.#connectionError = undefined));
    }
  }

  #unavailable(error: unknown): RedisUnavailableError {
    if (error instanceof RedisUnavailableError) return error;
    const reason = describeConnectionFailure(this.#where, error, this.#connectionError);
    return new RedisUnavailableError(`redis unreachable: ${reason}`, { cause: error });
  }

  async exchange(commands: readonly RedisCommand[]): Promise<Array<RedisReply | RedisCommandError>> {
    if (commands.length === 1) return [await this.#single(commands[0]!)];
    const results = this.#client instanceof Cluster ? await this.#onCluster(this.#client, commands) : await this.#sentOneByOne(this.#client, commands);
    return results.map(([error, value], i) => {
      if (!error) return commands[i]!.name === 'EXEC' ? transactionReply(value, commands, i) : (value as RedisReply);
      if (isReplyError(error)) return new RedisCommandError(commands[i]!.name, error.message);
      throw this.#unavailable(error);
    });
  }

  /**
   * A Cluster's exchange: sent one by one to the master that serves its slot, as on a
   * standalone connection (the commands of one exchange name keys of one hash tag). When that
   * master is not known or not ready, or refused every command as not its own (a failover or
   * a resharding moved the slot: nothing ran, so nothing runs twice), the exchange goes
   * through an ioredis Pipeline, which follows the Cluster's redirections. A slot that moved
   * between two commands of one exchange (some ran) is answered as it is: the refused ones
   * fail, as any refusal does.
   */
  async #onCluster(client: Cluster, commands: readonly RedisCommand[]): Promise<Array<[Error | null, unknown]>> {
    const master = slotMaster(client, commands);
    if (master === undefined) return this.#pipelined(client, commands);
    const results = await this.#sentOneByOne(master, commands);
    if (!results.some(([error]) => redirected(error))) return results;
    const refreshed = this.#refreshSlots(client);
    const nothingRan = results.every(([error], i) => notRunHere(error) || (error === null && TOUCHES_NO_KEY.has(commands[i]!.name)));
    if (!nothingRan) return results;
    await refreshed;
    return this.#pipelined(client, commands);
  }

  /** The Cluster's slot map asked again (within the exchange's time; a failure leaves the old map, which the Pipeline's own redirections correct). */
  async #refreshSlots(client: Cluster): Promise<void> {
    const refreshed = new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
    await withTimeLimit(refreshed, this.#timeoutMs).catch(() => undefined);
  }

  /** A Cluster's exchange through one ioredis Pipeline, which sends a transaction to the node of its keys. */
  async #pipelined(client: Cluster, commands: readonly RedisCommand[]): Promise<Array<[Error | null, unknown]>> {
    const pipeline = client.pipeline();
    for (const cmd of commands) pipeline.callBuffer(cmd.name, ...cmd.args.map(toBuffer));
    const results = await this.#bounded(pipeline.exec(), commands);
    if (!results) throw this.#unavailable(new Error('pipeline was discarded'));
    return results;
  }

  /**
   * Several commands on one connection, each sent as its own call in the same tick: ioredis
   * writes them in order, back to back, and Redis answers in order, as a pipeline would. The
   * Pipeline object costs Node far more per entry (its replies survive young-generation
   * collections: about 3 µs of garbage collection per 300 B entry claimed, measured), and a
   * standalone connection needs nothing it adds. Answers as a Pipeline does: [error, value].
   */
  async #sentOneByOne(client: Redis, commands: readonly RedisCommand[]): Promise<Array<[Error | null, unknown]>> {
    const stream = client.stream as { cork?: () => void; uncork?: () => void } | undefined;
    // Corked, the calls leave in one write; uncorked whatever happens, or the connection would stall.
    stream?.cork?.();
    let sent: Array<Promise<[Error | null, unknown]>>;
    try {
      sent = commands.map((cmd) => client.callBuffer(cmd.name, ...cmd.args.map(toBuffer)).then(
        (value): [Error | null, unknown] => [null, value],
        (error: unknown): [Error | null, unknown] => [error instanceof Error ? error : new Error(String(error)), undefined],
      ));
    } finally {
      stream?.uncork?.();
    }
    return this.#bounded(Promise.all(sent), commands);
  }

  readonly blockingReader = (): BlockingReader => {
    this.#blocking ??= new IoredisBlockingReader(this.#client, this.#timeoutMs, (error) => this.#unavailable(error));
    return this.#blocking;
  };

  /** One command skips the Pipeline object: measurably cheaper per publish or wait. */
  async #single(cmd: RedisCommand): Promise<RedisReply | RedisCommandError> {
    try {
      return (await this.#bounded(this.#client.callBuffer(cmd.name, ...cmd.args.map(toBuffer)), [cmd])) as RedisReply;
    } catch (error) {
      if (isReplyError(error)) return new RedisCommandError(cmd.name, error.message);
      throw this.#unavailable(error);
    }
  }

  /** The reply, or RedisUnavailableError once the exchange's time is up or the connection failed. */
  async #bounded<T>(sent: Promise<T>, commands: readonly RedisCommand[]): Promise<T> {
    try {
      return await withTimeLimit(sent, this.#timeoutMs + blockingMs(commands));
    } catch (error) {
      if (isReplyError(error)) throw error;
      throw this.#unavailable(error);
    }
  }

  /**
   * Closes the connection without a command: every exchange of the port has been answered
   * (or given up on), so there is nothing for QUIT to wait for, and QUIT is one more billed
   * command per process on serverless Redis. A warm Lambda container or Worker isolate never
   * closes its port (it serves the next invocation); the CLI and tests do.
   */
  async close(): Promise<void> {
    this.#blocking?.close();
    if (!this.#owned) return;
    this.#client.disconnect();
  }

  toJSON(): object {
    return { transport: this.transport, cluster: this.cluster };
  }
}

/**
 * The ready connection to the master that serves the slot of an exchange's keys, as the
 * Cluster's slot map has it; undefined when the Cluster is not ready, the map has no master
 * for that slot yet, or its connection is not ready (the Pipeline then waits or fails as the
 * Cluster's options say).
 */
function slotMaster(client: Cluster, commands: readonly RedisCommand[]): Redis | undefined {
  if (client.status !== 'ready') return undefined;
  let slot: number | null = null;
  for (const cmd of commands) {
    slot = new Command(cmd.name, cmd.args.map(toBuffer)).getSlot();
    if (slot !== null) break;
  }
  const key = slot === null ? undefined : client.slots[slot]?.[0];
  if (key === undefined) return undefined;
  const master = client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === key);
  return master?.status === 'ready' ? master : undefined;
}

/**
 * EXEC's reply with each failed command as a RedisCommandError in its slot (ioredis hands
 * them over as error objects inside the array), named after the command queued there.
 */
function transactionReply(value: unknown, commands: readonly RedisCommand[], execAt: number): RedisReply {
  if (!Array.isArray(value)) return value as RedisReply;
  const multiAt = commands.slice(0, execAt).map((cmd) => cmd.name).lastIndexOf('MULTI');
  const queued = commands.slice(multiAt + 1, execAt);
  return value.map((slot, j) =>
    isReplyError(slot) ? (new RedisCommandError(queued[j]?.name ?? 'EXEC', slot.message) as unknown as RedisReply) : (slot as RedisReply),
  );
}

/**
 * Blocking reads on a connection of their own (a duplicate of the port's client). An abort
 * sends CLIENT UNBLOCK from the shared connection, so the blocked command answers at once as
 * if its wait had run out — or with the entry it had just taken, never losing one in flight.
 * Where the blocked connection cannot be named (Cluster), it is dropped instead and opened
 * again on the next read; an entry Redis delivered in that instant stays pending until minIdle.
 */
class IoredisBlockingReader implements BlockingReader {
  #connection: Client | undefined;
  #id: number | undefined;

  constructor(
    private readonly shared: Client,
    private readonly timeoutMs: number,
    private readonly unavailable: (error: unknown) => Error,
  ) {}

  async read(cmd: RedisCommand, signal?: AbortSignal): Promise<RedisReply | RedisCommandError> {
    if (signal?.aborted) return null;
    const connection = this.#open();
    const interrupt = () => void this.#interrupt(connection);
    signal?.addEventListener('abort', interrupt, { once: true });
    try {
      if (this.#id === undefined && !(connection instanceof Cluster)) this.#id = Number(await connection.call('CLIENT', 'ID'));
      if (signal?.aborted) return null;
      const sent = connection.callBuffer(cmd.name, ...cmd.args.map(toBuffer)) as Promise<RedisReply>;
      return await withTimeLimit(sent, this.timeoutMs + blockingMs([cmd]));
    } catch (error) {
      if (isReplyError(error)) return new RedisCommandError(cmd.name, error.message);
      if (signal?.aborted) return null;
      throw this.unavailable(error);
    } finally {
      signal?.removeEventListener('abort', interrupt);
    }
  }

  #open(): Client {
    if (this.#connection === undefined) {
      const connection = this.shared.duplicate();
      // Failures surface through the read that meets them.
      connection.on('error', () => {});
      // ioredis reconnects on its own (a server timeout, CLIENT KILL, a failover): the id then
      // names another client, or none, and must be asked again.
      connection.on('ready', () => {
        if (this.#connection === connection) this.#id = undefined;
      });
      this.#connection = connection;
      this.#id = undefined;
    }
    return this.#connection;
  }

  async #interrupt(connection: Client): Promise<void> {
    const id = this.#id;
    if (id !== undefined && !(this.shared instanceof Cluster)) {
      try {
        // 1: the wait ended as if its time ran out. 0: nothing of that id was blocked (the
        // command not there yet, or the id stale) — then only dropping the connection ends it.
        if ((await withTimeLimit(this.shared.call('CLIENT', 'UNBLOCK', id) as Promise<unknown>, this.timeoutMs)) === 1) return;
      } catch {
        // fall through: drop the connection
      }
    }
    if (this.#connection === connection) this.#connection = undefined;
    connection.disconnect();
  }

  close(): void {
    this.#connection?.disconnect();
    this.#connection = undefined;
  }
}

export interface PortOptions {
  /** See EXCHANGE_TIMEOUT_MS. */
  readonly exchangeTimeoutMs?: number;
}

/** Wraps a client you manage; `close()` leaves it open. */
export function ioredisPort(client: Client, options: PortOptions = {}): RedisPort {
  return new IoredisPort(client, false, options.exchangeTimeoutMs ?? EXCHANGE_TIMEOUT_MS);
}

/** Connects to a standalone server, e.g. `redis://:password@127.0.0.1:6379/0`. */
export function connectIoredis(url: string, options: RedisOptions & PortOptions = {}): RedisPort {
  const { exchangeTimeoutMs = EXCHANGE_TIMEOUT_MS, ...redis } = options;
  return new IoredisPort(new Redis(url, { ...IOREDIS_DEFAULTS, ...redis }), true, exchangeTimeoutMs);
}

export function connectIoredisCluster(nodes: ClusterNode[], options: ClusterOptions & PortOptions = {}): RedisPort {
  const { exchangeTimeoutMs = EXCHANGE_TIMEOUT_MS, ...cluster } = options;
  const redisOptions = { ...IOREDIS_DEFAULTS, ...cluster.redisOptions };
  return new IoredisPort(new Cluster(nodes, { enableOfflineQueue: true, ...cluster, redisOptions }), true, exchangeTimeoutMs);
}
