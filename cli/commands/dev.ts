/**
 * `dev`: the local stack in the foreground. Prints where everything is (stderr; the dev
 * file's path, never a key), one JSON line per run and per finished saga instance (stdout),
 * and stops everything it started on SIGINT/SIGTERM, exiting 0 — or when the process that
 * started it goes away without passing a signal on (see local/process-guards.ts).
 */
import { isLocalDemo } from '../../local/demo';
import { watchParent } from '../../local/process-guards';
import { startLocalStack } from '../../local/stack';
import { formatLogLine } from '../../src/deployment/log-line';
import type { Migration } from '../../src/postgres/migrations';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';

export const DEFAULT_DEV_PORT = 8787;

function portOption(text: string | undefined): number {
  if (text === undefined) return DEFAULT_DEV_PORT;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError('--port must be an integer in 0..=65535');
  return port;
}

function curlExample(apiUrl: string, tokenEnv: string): string {
  return (
    `curl -i -X POST ${apiUrl}/v1/events/order.placed -H "Authorization: Bearer $${tokenEnv}" ` +
    `-H 'Idempotency-Key: placed-1' -H 'content-type: application/json' ` +
    `-d '{"order_id":"order-1","sku":"sku-espresso","qty":1,"amount_cents":1200}'`
  );
}

export async function devCommand(ctx: CommandContext): Promise<void> {
  const { args, io, loaded } = ctx;
  // Read before anything is started: the wrapper may die while the stack starts.
  const parent = process.ppid;
  if (args.positionals.length > 0) throw new UsageError('dev takes no arguments');
  const port = portOption(args.string('port'));
  const demo = isLocalDemo(loaded.module.demo) ? loaded.module.demo : undefined;
  const { config } = loaded;

  const migrations = Array.isArray(loaded.module.migrations) ? (loaded.module.migrations as Migration[]) : undefined;
  const stack = await startLocalStack({ config, env: io.env, demo, port, host: args.string('host') ?? '127.0.0.1', out: io.out, err: io.err, migrations, cwd: io.cwd });
  try {
    io.out(formatLogLine({ level: 'info', msg: 'local stack started', deployment: config.name, timestamp: Date.now(), detail: { api: stack.apiUrl, dashboard: stack.dashboard.url, redis: stack.redis.display, privateRedis: stack.redis.private } }));
    io.err(`saga-streams dev — ${config.name}`);
    io.err(`  redis        ${stack.redis.display}${stack.redis.private ? ' (private redis-server, stopped on exit)' : ''}`);
    if (stack.database) io.err(`  database     ${stack.database.display}`);
    io.err(`  publish API  ${stack.apiUrl}/v1/events/{eventType}   ${stack.apiUrl}/healthz`);
    io.err(`  dashboard    ${stack.dashboard.url}   (log in with the admin token in $${stack.dashboard.tokenEnv})`);
    if (stack.dashboard.token) {
      const origin = stack.dashboard.tokenKept ? 'kept from the last run' : 'generated for this run';
      io.err(`  admin token  ${origin}: export ${stack.dashboard.tokenEnv}=${stack.dashboard.token}`);
    }
    if (stack.generatedSecrets.length > 0) io.err(`  secrets      generated: ${stack.generatedSecrets.join(', ')}`);
    if (stack.reusedSecrets.length > 0) io.err(`  secrets      kept from the last run: ${stack.reusedSecrets.join(', ')}`);
    // The path only: the file holds the signing keys.
    io.err(`  dev file     ${stack.devFile} (Redis URL and secrets for saga-streams poll/publish/backlog/dlt in this folder)`);
    for (const [producer, token] of stack.tokens) {
      const tokenEnv = config.data.publishApi!.producers[producer]!.tokenEnv;
      io.err(`  token        ${producer}: export ${tokenEnv}=${token}`);
      if (producer === demo?.producer) io.err(`  try          ${curlExample(stack.apiUrl, tokenEnv)}`);
    }
    io.err('Ctrl-C stops everything.');
    if (demo && !args.flag('no-demo')) await stack.placeDemoOrders();
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) return resolve();
      const unwatch = watchParent((gone) => {
        io.err(`the process that started the stack (pid ${gone}) is gone`);
        resolve();
      }, parent);
      io.signal.addEventListener('abort', () => (unwatch(), resolve()), { once: true });
    });
    io.err('stopping…');
  } finally {
    await stack.stop();
  }
  io.out(formatLogLine({ level: 'info', msg: 'local stack stopped', deployment: config.name, timestamp: Date.now() }));
}
