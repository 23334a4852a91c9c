/**
 * A loopback TCP proxy that injects network faults in front of a Redis server, for the
 * chaos harness: `dropAll()` resets every open connection (new ones still get through),
 * and `stall(ms)` stops moving bytes in both directions on every connection, new ones
 * included, without closing anything — a half-open network — then lets them flow again.
 */
import { createServer, Socket, type Server } from 'node:net';

export interface FaultProxy {
  readonly port: number;
  readonly url: string;
  dropAll(): number;
  stall(ms: number): Promise<void>;
  readonly stalled: boolean;
  close(): Promise<void>;
}

interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  flowing: boolean;
}

function flow(link: Link): void {
  if (link.flowing || link.client.destroyed) return;
  link.flowing = true;
  link.client.pipe(link.upstream);
  link.upstream.pipe(link.client);
  link.client.resume();
  link.upstream.resume();
}

function hold(link: Link): void {
  if (!link.flowing) return;
  link.flowing = false;
  // pipe() resumes a paused source on 'drain': unpipe first so the stall is total.
  link.client.unpipe(link.upstream);
  link.upstream.unpipe(link.client);
  link.client.pause();
  link.upstream.pause();
}

export async function startFaultProxy(targetHost: string, targetPort: number): Promise<FaultProxy> {
  const links = new Set<Link>();
  let stalledUntil = 0;
  const isStalled = () => Date.now() < stalledUntil;
  const server: Server = createServer((client) => {
    const link: Link = { client, upstream: new Socket(), flowing: false };
    links.add(link);
    const drop = () => {
      links.delete(link);
      client.destroy();
      link.upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    link.upstream.on('error', drop).on('close', drop);
    client.pause();
    link.upstream.connect(targetPort, targetHost, () => {
      if (isStalled()) setTimeout(() => flow(link), stalledUntil - Date.now());
      else flow(link);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get stalled() {
      return isStalled();
    },
    dropAll() {
      const n = links.size;
      for (const link of [...links]) {
        link.client.resetAndDestroy();
        link.upstream.destroy();
      }
      links.clear();
      return n;
    },
    async stall(ms) {
      stalledUntil = Date.now() + ms;
      const held = [...links].filter((link) => link.flowing);
      for (const link of held) hold(link);
      await new Promise((resolve) => setTimeout(resolve, ms));
      for (const link of held) flow(link);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) {
          link.client.destroy();
          link.upstream.destroy();
        }
        links.clear();
        server.close(() => resolve());
      }),
  };
}
