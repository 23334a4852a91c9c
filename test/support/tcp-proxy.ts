/**
 * A loopback TCP proxy in front of a Redis server that a test can cut: `cut()` destroys
 * every connection and refuses new ones, which looks to a client exactly like Redis
 * becoming unreachable, while the server behind it keeps its state for inspection.
 */
import { createServer, Socket, type Server } from 'node:net';

export interface TcpProxy {
  readonly url: string;
  cut(): void;
  /** Keeps every connection open but stops forwarding: a half-open network, no error. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  let frozen = false;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(targetPort, targetHost, () => {
      client.on('data', (chunk) => frozen || upstream.write(chunk));
      upstream.on('data', (chunk) => frozen || client.write(chunk));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze() {
      frozen = true;
    },
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        open = false;
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
