/**
 * The local stack (`saga-streams dev`): Redis (REDIS_URL, or a private redis-server on a
 * free port), the publish API and the ops dashboard (`/ops`, whatever the config says, with
 * an admin token generated unless set) on one HTTP server, every consumer polled
 * right after appends to its stream and on its emulated cron schedule, trim on its
 * schedule, the outbox relay after every run that committed and on its schedule (with the
 * config's database: DATABASE_URL, or PGlite on disk), and the config's demo (the example saga's two orders) placed through the API.
 * While it runs, `.saga-streams/dev.json` tells the CLI in the same folder where its Redis is
 * and which secrets it signs with (see dev-file.ts).
 * `stop()` undoes all of it, the private redis-server included.
 */
import { Hono } from 'hono';
import { connectTcp } from '../src/deployment/connect-tcp';
import type { DeploymentConfig } from '../src/deployment/define-config';
import { formatLogLine } from '../src/deployment/log-line';
import { createRuntime } from '../src/deployment/runtime';
import { nodeHmac } from '../src/node/crypto';
import type { SecretEnv } from '../src/deployment/secrets';
import { DASHBOARD_BASE } from '../src/dashboard/app';
import { createPublishApp } from '../src/http/app';
import { command } from '../src/redis/port';
import { runCommand } from '../src/redis/script';
import { createConsumerLoops } from './consumer-loops';
import { cronMatches, msToNextMinute } from './cron-match';
import type { LocalDemo } from './demo';
import { devSecrets } from './dev-secrets';
import { readDevFile, runningStack, writeDevFile } from './dev-file';
import { serveFetch } from './http-server';
import { openLocalDatabase, type LocalDatabase } from './local-database';
import { startLocalRedis, type LocalRedis } from './local-redis';
import type { Migration } from '../src/postgres/migrations';
import { localDashboard } from './dashboard';
import { watchStreams } from './stream-watcher';

export interface LocalStackOptions {
  readonly config: DeploymentConfig;
  readonly env: SecretEnv;
  readonly demo?: LocalDemo;
  readonly port: number;
  readonly host: string;
  /** JSON lines: one per run, one per finished saga instance, and the stack's own events. */
  readonly out: (line: string) => void;
  /** Messages for a human (progress, warnings). */
  readonly err: (line: string) => void;
  /** The config module's own migrations (applied after saga-streams' at start). */
  readonly migrations?: readonly Migration[];
  /** Folder holding `.saga-streams/pglite` (default: the process's working folder). */
  readonly cwd?: string;
}

export interface LocalStack {
  readonly apiUrl: string;
  readonly redis: LocalRedis;
  readonly database: LocalDatabase | undefined;
  /** producer → development token (generated or kept in the dev file; tokens from the environment are not listed). */
  readonly tokens: ReadonlyMap<string, string>;
  readonly generatedSecrets: readonly string[];
  /** The dashboard's address and admin token variable; `token` only when generated for this run. */
  readonly dashboard: { readonly url: string; readonly tokenEnv: string; readonly token?: string; readonly tokenKept?: boolean };
  /** Secrets taken over from an earlier run's dev file. */
  readonly reusedSecrets: readonly string[];
  /** The dev file (`.saga-streams/dev.json`): where the CLI finds this stack. */
  readonly devFile: string;
  /** Publishes the demo's events through the API (done once at startup unless disabled). */
  placeDemoOrders(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { config, out, err } = options;
  const stops: Array<() => Promise<void>> = [];
  /** Undoes what started, newest first; each step at most once. */
  const stopAll = async () => {
    for (let stop = stops.pop(); stop; stop = stops.pop()) await stop().catch((error) => err(`while stopping: ${(error as Error).message}`));
  };
  const cwd = options.cwd ?? process.cwd();
  const other = runningStack(cwd);
  // Two stacks in one folder would share the PGlite folder and overwrite each other's dev file.
  if (other && other.stack.pid !== process.pid) {
    throw new Error(`a local stack is already running in this folder (pid ${other.stack.pid}, ${other.stack.apiUrl}); stop it first, or delete ${other.path} if that pid is not the stack`);
  }
  try {
    const redis = await startLocalRedis(config, options.env);
    stops.push(redis.stop);
    const persisted = readDevFile(cwd)?.env;
    const admin = localDashboard(config, redis.env, persisted);
    const secrets = devSecrets(config, admin.env, persisted);
    // What the dev file keeps: the dev secrets and the dashboard's dev token (not a token you exported).
    const kept = admin.generated === undefined ? secrets.values : { ...secrets.values, [admin.tokenEnv]: admin.generated };
    const env = secrets.env;
    const port = connectTcp(config, env);
    stops.push(() => port.close());
    await runCommand(port, command('PING'));
    const database = await openLocalDatabase(config, env, { cwd, migrations: options.migrations });
    if (database) stops.push(() => database.db.close());
    const runtime = createRuntime(config, { port, env, hmac: nodeHmac, database: database ? async () => database.db : undefined, history: true });

    const controller = new AbortController();
    const loops = createConsumerLoops({ runtime, log: out, signal: controller.signal, relay: database !== undefined });
    const streams = [...new Set([...config.consumers.values()].map((plan) => plan.config.stream))];
    const watching = watchStreams({
      streams,
      connect: () => connectTcp(config, env),
      onAppend: (stream) => loops.wake([stream]),
      onError: (stream, error) => err(`watching ${stream}: ${(error as Error).message}`),
      signal: controller.signal,
    });
    // Stops run in reverse: abort, then wait for the watchers and the runs in flight.
    stops.push(() => loops.idle());
    stops.push(() => watching);
    stops.push(async () => controller.abort());

    // Emulated cron: at each minute boundary, whatever is scheduled for that minute.
    let timer: NodeJS.Timeout;
    const tick = () => {
      const now = new Date();
      for (const plan of config.consumers.values()) if (plan.schedule && cronMatches(plan.schedule, now)) loops.trigger(plan.name);
      if (config.data.trim && cronMatches(config.data.trim.schedule, now)) void loops.trim();
      if (database && config.data.postgres?.relay && cronMatches(config.data.postgres.relay.schedule, now)) void loops.relay();
      timer = setTimeout(tick, msToNextMinute(Date.now()));
    };
    timer = setTimeout(tick, msToNextMinute(Date.now()));
    stops.push(async () => clearTimeout(timer));

    // First runs create the groups (and catch up on anything already in the streams).
    loops.triggerAll();
    await loops.idle();

    const panels = options.demo && database ? { 'Example saga': () => options.demo!.snapshot(runtime.postgres) } : undefined;
    const dashboard = { adminTokenEnv: admin.tokenEnv, panels };
    const publishApp = createPublishApp({ runtime, env, wakeUp: async (touched) => loops.wake(touched), log: out, dashboard });
    const app = new Hono();
    app.get('/', (c) => c.redirect(DASHBOARD_BASE));
    // The Node bindings go along: the dashboard's login throttle tells clients apart by them.
    app.all('*', (c) => publishApp.fetch(c.req.raw, c.env));
    const server = await serveFetch(app.fetch, options.port, options.host);
    // Closed first on stop (stops run in reverse): no new publishes while the rest winds down.
    stops.push(() => server.close());

    // Written once the API answers. Stopping rewrites it first: the secrets stay for the next
    // start, the Redis URL and pid go, so the CLI stops pointing at a stack winding down.
    const redisUrlEnv = config.data.redis.tcp!.urlEnv;
    const devFile = writeDevFile(cwd, {
      env: { ...kept, [redisUrlEnv]: redis.env[redisUrlEnv]! },
      stack: { pid: process.pid, apiUrl: server.url, redisUrlEnv, startedAt: new Date().toISOString() },
    });
    stops.push(async () => void writeDevFile(cwd, { env: kept }));

    if (options.demo) {
      const demo = options.demo;
      const unsubscribe = demo.onFinished((fields) =>
        out(formatLogLine({ level: 'info', msg: 'saga finished', deployment: config.name, timestamp: Date.now(), detail: fields })),
      );
      stops.push(async () => unsubscribe());
    }

    const placeDemoOrders = async () => {
      const demo = options.demo;
      if (!demo) return;
      const tokenEnv = config.data.publishApi?.producers[demo.producer]?.tokenEnv;
      const token = tokenEnv === undefined ? undefined : env[tokenEnv];
      if (!token) return err(`demo: producer ${demo.producer} has no publish API token; no demo orders placed`);
      const runId = Date.now().toString(36);
      for (const event of demo.events(runId)) {
        const response = await fetch(`${server.url}/v1/events/${encodeURIComponent(event.eventType)}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'idempotency-key': event.eventId, 'content-type': 'application/json' },
          body: JSON.stringify(event.payload),
        });
        err(`demo: ${event.eventType} ${event.eventId} → HTTP ${response.status}`);
        await response.body?.cancel();
      }
    };

    return {
      apiUrl: server.url,
      redis,
      database,
      tokens: secrets.tokens,
      generatedSecrets: secrets.generated,
      reusedSecrets: secrets.reused,
      devFile,
      dashboard: { url: `${server.url}${DASHBOARD_BASE}`, tokenEnv: admin.tokenEnv, token: admin.generated, tokenKept: admin.kept },
      placeDemoOrders,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
