/**
 * Counts the top-level commands a client sends to Redis, the way a per-command price bills
 * them (Upstash: $0.20 per 100k commands): a loopback TCP proxy in front of the server that
 * reads the RESP requests going to it. Every command the client writes counts — a script
 * call once, whatever it runs inside (unlike `INFO commandstats`, which counts those too),
 * and also commands the server refuses or never logs (MONITOR does not show a `CLIENT
 * SETINFO` that Redis 7.0 rejects, yet it went over the wire). Replies pass through untouched.
 *
 * Put it between a client and Redis (connect the client to `url`), or between the REST
 * emulator and Redis to count what a REST client's requests cost.
 */
import { createServer, Socket, type Server } from 'node:net';

export interface CommandMeter {
  /** `redis://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /** Commands sent since the last reset, each as its name and (for scripts) the SHA-1 or `<script>`. */
  commands(): readonly string[];
  /** Zero the count (e.g. after a warm-up). Commands still in flight count in the new window. */
  reset(): void;
  close(): Promise<void>;
}

const CR = 13;
const LF = 10;
/** Bytes of an argument kept for the command's label (a name, a SHA-1). */
const LABEL_BYTES = 40;

/**
 * Incremental RESP request reader: `*<n>\r\n` then n × `$<len>\r\n<len bytes>\r\n`, split
 * across chunks anywhere. Bulk bytes are skipped, never copied, except the first two
 * arguments' first bytes (the label). An inline command (a line without `*`) counts as one.
 */
class RequestReader {
  #line: number[] = [];
  #argsLeft = 0;
  #bulkLeft = 0;
  #arg: number[] = [];
  #args: string[] = [];

  constructor(private readonly onCommand: (label: string) => void) {}

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#bulkLeft > 0) {
        const take = Math.min(this.#bulkLeft, chunk.length - at);
        // The argument's bytes, minus its closing CRLF; only the first ones of the first two arguments.
        if (this.#args.length < 2) {
          const end = Math.min(at + take, at + Math.max(0, this.#bulkLeft - 2));
          for (let i = at; i < end && this.#arg.length < LABEL_BYTES; i += 1) this.#arg.push(chunk[i]!);
        }
        this.#bulkLeft -= take;
        at += take;
        if (this.#bulkLeft === 0) this.#endArgument();
        continue;
      }
      const byte = chunk[at++]!;
      if (byte !== LF) {
        if (byte !== CR) this.#line.push(byte);
        continue;
      }
      this.#endLine(Buffer.from(this.#line).toString('latin1'));
      this.#line = [];
    }
  }

  #endLine(line: string): void {
    if (this.#argsLeft > 0 && line.startsWith('$')) {
      this.#bulkLeft = Number(line.slice(1)) + 2;
      this.#arg = [];
      return;
    }
    if (line.startsWith('*')) {
      this.#argsLeft = Number(line.slice(1));
      this.#args = [];
      if (this.#argsLeft <= 0) this.onCommand('');
      return;
    }
    if (line.trim() !== '') this.onCommand(line.trim().split(/\s+/)[0]!.toUpperCase());
  }

  #endArgument(): void {
    if (this.#args.length < 2) this.#args.push(Buffer.from(this.#arg).toString('latin1'));
    this.#argsLeft -= 1;
    if (this.#argsLeft === 0) this.onCommand(labelOf(this.#args));
  }
}

function labelOf(args: readonly string[]): string {
  const name = (args[0] ?? '').toUpperCase();
  return name === 'EVALSHA' ? `${name} ${args[1] ?? ''}` : name === 'EVAL' ? `${name} <script>` : name;
}

export async function startCommandMeter(target: { readonly host: string; readonly port: number }): Promise<CommandMeter> {
  let seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    const reader = new RequestReader((label) => seen.push(label));
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pause();
    upstream.connect(target.port, target.host, () => {
      client.on('data', (chunk: Buffer) => {
        reader.feed(chunk);
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    commands: () => [...seen],
    reset() {
      seen = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
