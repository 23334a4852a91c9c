/**
 * A minimal RESP2 connection for the REST emulator. It exists because the server must
 * tell a status reply (`+OK`) from a bulk string (`$2 OK`) — Upstash encodes the two
 * differently — and Node clients (ioredis, redis-parser) hand both back as the same Buffer.
 * Development infrastructure only: one socket, commands pipelined in order, replies matched FIFO;
 * a broken connection fails what is in flight and the next call connects again.
 */
import { connect, type Socket } from 'node:net';

/** A `+…` reply. */
export class Status {
  constructor(readonly text: string) {}
}

/** A `-…` reply, top-level or nested (EXEC, Lua tables). */
export class ReplyError {
  constructor(readonly message: string) {}
}

export type Reply = Status | ReplyError | Buffer | number | null | Reply[];

interface Frame {
  readonly items: Reply[];
  remaining: number;
}

const CRLF = Buffer.from('\r\n');

function encodeCommand(args: readonly string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(arg, 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

/**
 * Incremental reply parser: completed elements are attached to their arrays and their
 * bytes dropped, so a large reply costs linear time; a bulk string waits until all of its
 * bytes are there before anything is copied.
 */
class ReplyParser {
  #chunks: Buffer[] = [];
  #length = 0;
  /** Bytes needed before parsing can progress (a bulk string's full size). */
  #needed = 0;
  readonly #stack: Frame[] = [];

  constructor(private readonly onReply: (reply: Reply) => void) {}

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#length < this.#needed) return;
    let buffer = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    let offset = 0;
    for (;;) {
      const step = this.#next(buffer, offset);
      if (step === undefined) break;
      offset = step;
    }
    buffer = buffer.subarray(offset);
    this.#chunks = buffer.length > 0 ? [buffer] : [];
    this.#length = buffer.length;
  }

  /** Parses one element at `offset`; the offset after it, or undefined when more bytes are needed. */
  #next(buffer: Buffer, offset: number): number | undefined {
    const end = buffer.indexOf(CRLF, offset);
    if (end < 0) {
      this.#needed = 0;
      return undefined;
    }
    const type = String.fromCharCode(buffer[offset]!);
    const line = buffer.toString('utf8', offset + 1, end);
    const after = end + 2;
    switch (type) {
      case '+':
        return this.#done(new Status(line), after);
      case '-':
        return this.#done(new ReplyError(line), after);
      case ':':
        return this.#done(Number(line), after);
      case '$': {
        const size = Number(line);
        if (size < 0) return this.#done(null, after);
        if (buffer.length < after + size + 2) {
          // Kept bytes start at this element once the loop drops what came before it.
          this.#needed = after - offset + size + 2;
          return undefined;
        }
        return this.#done(Buffer.from(buffer.subarray(after, after + size)), after + size + 2);
      }
      case '*': {
        const count = Number(line);
        if (count < 0) return this.#done(null, after);
        if (count === 0) return this.#done([], after);
        this.#stack.push({ items: [], remaining: count });
        return after;
      }
      default:
        throw new Error(`RESP: unexpected reply type ${JSON.stringify(type)}`);
    }
  }

  #done(value: Reply, next: number): number {
    this.#needed = 0;
    let reply = value;
    for (;;) {
      const frame = this.#stack.at(-1);
      if (!frame) {
        this.onReply(reply);
        return next;
      }
      frame.items.push(reply);
      frame.remaining -= 1;
      if (frame.remaining > 0) return next;
      this.#stack.pop();
      reply = frame.items;
    }
  }
}

interface Waiter {
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: Error) => void;
}

export class RespConnection {
  readonly #url: URL;
  #socket: Socket | undefined;
  #waiters: Waiter[] = [];

  /** `redis://[:password@]host:port` */
  constructor(redisUrl: string) {
    this.#url = new URL(redisUrl);
  }

  /** Sends the commands in one write and resolves with their replies, in order. */
  send(commands: ReadonlyArray<readonly string[]>): Promise<Reply[]> {
    const fresh = !this.#socket || this.#socket.destroyed;
    const socket = this.#connected();
    const auth = fresh && this.#url.password ? [['AUTH', decodeURIComponent(this.#url.password)]] : [];
    const all = [...auth, ...commands];
    const replies = all.map(() => new Promise<Reply>((resolve, reject) => this.#waiters.push({ resolve, reject })));
    socket.write(Buffer.concat(all.map(encodeCommand)));
    return Promise.all(replies).then((got) => got.slice(auth.length));
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #connected(): Socket {
    if (this.#socket && !this.#socket.destroyed) return this.#socket;
    const socket = connect({ host: this.#url.hostname, port: Number(this.#url.port || 6379) });
    const waiters: Waiter[] = [];
    this.#waiters = waiters;
    const parser = new ReplyParser((reply) => waiters.shift()?.resolve(reply));
    socket.on('data', (chunk: Buffer) => parser.push(chunk));
    const fail = (error: Error) => {
      for (const waiter of waiters.splice(0)) waiter.reject(error);
      if (this.#socket === socket) this.#socket = undefined;
      socket.destroy();
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection to Redis closed')));
    this.#socket = socket;
    return socket;
  }
}
