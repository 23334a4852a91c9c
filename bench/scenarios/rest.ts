/**
 * The product's run loop over the REST client (@upstash/redis) through the Upstash-protocol
 * REST test server in front of the same private Redis; HTTP requests are counted at the
 * server, so round trips per round are measured where they happen.
 */
import { randomBytes } from 'node:crypto';
import { connectUpstash } from '../../src/redis/upstash-port';
import { startRestServer } from '../../local/rest-emulator';
import { runProduct } from './product';
import type { ScenarioResult, StreamParams } from './types';

export async function runRest(params: StreamParams): Promise<ScenarioResult> {
  const token = randomBytes(16).toString('hex');
  const server = await startRestServer({ redisUrl: params.redisUrl, token });
  try {
    return await runProduct(params, {
      connect: () => connectUpstash({ url: server.url, token }),
      roundTripCounter: () => server.stats().requests,
    });
  } finally {
    await server.close();
  }
}
