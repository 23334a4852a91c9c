/**
 * A loopback TCP proxy in front of PostgreSQL that can lose a COMMIT's reply: once armed,
 * the first client message holding `COMMIT` is delivered to the server, the server's answer
 * is dropped, and both connections are cut after the server had time to commit — exactly a
 * network failure between "COMMIT sent" and "reply received", the uncertain commit.
 */
import { createServer, Socket } from 'node:net';

export interface CommitCutProxy {
  /** Connection string through the proxy for `database`. */
  url(user: string, database: string): string;
  /** Cuts at the next COMMIT; resolves once it has. */
  cutAtNextCommit(): Promise<void>;
  close(): Promise<void>;
}

const COMMIT = Buffer.from('COMMIT');
/** Time the server gets to execute the delivered COMMIT before the connection is cut. */
const SERVER_COMMIT_MS = 200;

export async function startCommitCutProxy(targetHost: string, targetPort: number): Promise<CommitCutProxy> {
  const sockets = new Set<Socket>();
  let armed: (() => void) | undefined;
  const server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    let replies = true;
    const drop = () => (client.destroy(), upstream.destroy());
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(targetPort, targetHost, () => {
      client.on('data', (chunk: Buffer) => {
        const cut = armed;
        if (!cut || !chunk.includes(COMMIT)) return void upstream.write(chunk);
        armed = undefined;
        replies = false;
        upstream.write(chunk, () => setTimeout(() => (drop(), cut()), SERVER_COMMIT_MS));
      });
      upstream.on('data', (chunk: Buffer) => replies && client.write(chunk));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (user, database) => `postgres://${user}@127.0.0.1:${port}/${database}`,
    cutAtNextCommit: () => new Promise<void>((resolve) => (armed = resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
