/**
 * `rest-emulator`: the Upstash REST protocol on 127.0.0.1 in front of the config's TCP Redis
 * (REDIS_URL, or the running local stack's), so the Worker runs under `wrangler dev` against
 * a real Redis with no Upstash account. The token is the config's REST token variable when
 * set, else one generated for this run and printed: it only guards a loopback development
 * server, and `.dev.vars` needs it. `--dev-vars <file>` writes that file instead (0600): the
 * REST variables and every secret the config names that the environment (or the local stack's
 * dev file) holds, so the Worker signs and verifies with the local stack's keys and no key
 * crosses the terminal. Serves until SIGINT/SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { secretNames } from '../../local/dev-secrets';
import { writePrivateFile } from '../../local/private-file';
import { startRestServer } from '../../local/rest-emulator';
import { readSecrets } from '../../src/deployment/secrets';
import { parseRedisUrl, splitNodeList } from '../../src/redis/redis-url';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';

/** The port serverless-redis-http, the usual Upstash emulator, listens on. */
export const DEFAULT_REST_EMULATOR_PORT = 8079;

function portOption(text: string | undefined): number {
  if (text === undefined) return DEFAULT_REST_EMULATOR_PORT;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError('--port must be an integer in 0..=65535');
  return port;
}

export async function restEmulatorCommand(ctx: CommandContext): Promise<void> {
  const { args, io, loaded } = ctx;
  if (args.positionals.length > 0) throw new UsageError('rest-emulator takes no arguments');
  const port = portOption(args.string('port'));
  const { tcp, rest } = loaded.config.data.redis;
  if (!tcp) throw new UsageError(`rest-emulator forwards to the TCP Redis: ${loaded.config.name}'s config has no redis.tcp`);
  const redisUrl = readSecrets(io.env, [tcp.urlEnv], 'rest-emulator').get(tcp.urlEnv)!;
  // A standalone URL is one URL, whatever commas its password holds (src/redis/redis-url.ts).
  if (tcp.cluster && splitNodeList(redisUrl).length > 1) throw new UsageError(`rest-emulator forwards to one Redis server, not a Cluster (${tcp.urlEnv} lists several)`);
  parseRedisUrl(redisUrl, tcp.urlEnv); // fails naming the variable, before the emulator's client parses it
  const urlEnv = rest?.urlEnv ?? 'UPSTASH_REDIS_REST_URL';
  const tokenEnv = rest?.tokenEnv ?? 'UPSTASH_REDIS_REST_TOKEN';
  const given = io.env[tokenEnv];
  const token = given || `dev-rest-${randomBytes(18).toString('base64url')}`;

  const devVars = args.string('dev-vars');

  const server = await startRestServer({ redisUrl, token, port });
  try {
    io.out(JSON.stringify({ level: 'info', msg: 'rest emulator started', url: server.url }));
    io.err(`saga-streams rest-emulator — Upstash REST protocol at ${server.url}, forwarding to ${tcp.urlEnv}`);
    if (devVars !== undefined) {
      const path = resolve(io.cwd, devVars);
      const secrets = secretNames(loaded.config).filter((name) => io.env[name]).sort();
      const lines = [`${urlEnv}=${server.url}`, `${tokenEnv}=${token}`, ...secrets.map((name) => `${name}=${io.env[name]}`)];
      writePrivateFile(path, `${lines.join('\n')}\n`);
      io.err(`  wrote        ${path} (${urlEnv}, ${tokenEnv}, ${secrets.join(', ') || 'no other secret'})`);
    } else {
      io.err(`  for the Worker's .dev.vars:`);
      io.err(`    ${urlEnv}=${server.url}`);
      io.err(given ? `    ${tokenEnv}=<your ${tokenEnv}>` : `    ${tokenEnv}=${token}`);
    }
    io.err('Ctrl-C stops it.');
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) return resolve();
      io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    await server.close();
  }
}
