/** Serving a fetch handler on Node (@hono/node-server), with a close that ends keep-alive connections too. */
import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function serveFetch(fetch: (request: Request) => Response | Promise<Response>, port: number, host: string): Promise<HttpServer> {
  const server = createAdaptorServer({ fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
