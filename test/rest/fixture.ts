/**
 * A REST server of the test file's own, so its HTTP request counts belong to that file
 * alone (the shared one from global setup serves every suite at once).
 */
import { randomBytes } from 'node:crypto';
import { startRestServer, type RestServer } from '../../local/rest-emulator';

export interface OwnRest {
  readonly server: RestServer;
  readonly token: string;
  /** Command requests the server received since the last call. */
  requestsSince(): number;
}

export async function ownRestServer(redisUrl: string): Promise<OwnRest> {
  const token = randomBytes(24).toString('hex');
  const server = await startRestServer({ redisUrl, token });
  let seen = 0;
  return {
    server,
    token,
    requestsSince() {
      const now = server.stats().requests;
      const delta = now - seen;
      seen = now;
      return delta;
    },
  };
}
