/**
 * The HTTP publish API (SPEC §6.2) as a Hono app: the same app serves Node (local stack),
 * Lambda (Hono's adapter) and Workers (`fetch`). Producer tokens are read and digested at
 * construction, so a missing token variable fails start-up naming the variable.
 *
 * @example
 * const runtime = createRuntime(config, { port: connectRest(config, env), env });
 * const app = createPublishApp({ runtime, env, wakeUp: (streams) => queue.send({ streams }) });
 * export default { fetch: app.fetch };
 */
import { Hono } from 'hono';
import type { DeploymentRuntime } from '../deployment/runtime';
import type { SecretEnv } from '../deployment/secrets';
import { createDashboardApp, DASHBOARD_BASE, type DashboardAppOptions } from '../dashboard/app';
import { ConfigError } from '../ground/errors';
import { responseForError } from './failures';
import { createHandlers } from './handlers';
import { createLogger, type LogSink } from '../web/log';
import { problemResponse } from '../web/problems';
import { deploymentReadiness, publicChecks } from './readiness';
import { traceRequest } from '../telemetry/tracing';
import { createTokenAuthenticator } from './tokens';
import type { PublishResult } from '../publish/publisher';
import { sendWakeUps, type WakeUpSender } from '../deployment/wake-up-plan';

export interface PublishAppOptions {
  readonly runtime: DeploymentRuntime;
  /** Where the producer token variables (`publishApi.producers.*.tokenEnv`) are read. */
  readonly env: SecretEnv;
  /**
   * Called after every successful publish with the streams it touched (duplicates
   * included: a retried request may follow a crash that sent no wake-up). Awaited before
   * the response, so it finishes on platforms that freeze after responding; its failure
   * is logged and never fails the publish. A scheduled event's wake-up is asked for with
   * its delay (`wakeUp(streams, delayMs)`), to arrive at its due time.
   */
  readonly wakeUp?: WakeUpSender;
  /** Clock for log timestamps. */
  readonly now?: () => number;
  /** Where JSON log lines go (default: console.log). */
  readonly log?: LogSink;
  /**
   * The ops dashboard at `/ops`; default: as the config's `publishApi.dashboard` says (off
   * when absent). The local stack passes its own, on whatever the config says.
   */
  readonly dashboard?: Pick<DashboardAppOptions, 'adminTokenEnv' | 'panels'>;
}

export function createPublishApp(options: PublishAppOptions): Hono {
  const { runtime, wakeUp } = options;
  const api = runtime.config.data.publishApi;
  if (!api) throw new ConfigError('publish API', [{ path: 'publishApi', message: 'is required to serve the publish API' }]);
  const tokens = createTokenAuthenticator(api.producers, options.env, runtime.hmac);
  const log = createLogger(options.log ?? ((line) => console.log(line)), options.now ?? Date.now, runtime.config.name);

  const afterPublish = async (results: readonly PublishResult[]): Promise<void> => {
    if (!wakeUp) return;
    await sendWakeUps(wakeUp, results, (error, streams) => log.warn('wake-up failed; consumers poll at their next tick', { error, detail: { streams } }));
  };
  const now = options.now ?? Date.now;
  const handlers = createHandlers({ runtime, tokens, bodyLimitBytes: api.bodyLimitBytes, maxBatch: api.maxBatch, afterPublish, now });

  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = await deploymentReadiness(runtime);
    const checks = publicChecks(readiness);
    if (readiness.ready) return c.json({ ready: true, checks });
    log.warn('not ready', { detail: { failed: readiness.checks.filter((check) => !check.ok) } });
    return problemResponse('not_ready', 'a readiness check failed', { checks });
  });
  // A SERVER span per publish request; its publish span's context goes into the entries.
  app.use('/v1/*', (c, next) =>
    traceRequest(c.req.method, c.req.path === '/v1/events' ? '/v1/events' : '/v1/events/:eventType', c.req.header('traceparent'), async () => {
      await next();
      return c.res.status;
    }),
  );
  app.post('/v1/events/:eventType', handlers.publishOne);
  app.post('/v1/events', handlers.publishBatch);
  const dashboard = options.dashboard ?? api.dashboard;
  if (dashboard) {
    app.route(DASHBOARD_BASE, createDashboardApp({ ...dashboard, runtime, env: options.env, log, now: options.now }));
    // A mounted app's root is `/ops` only; `/ops/` is what people type.
    app.get(`${DASHBOARD_BASE}/`, (c) => c.redirect(DASHBOARD_BASE, 301));
  }
  app.notFound(() => problemResponse('route_not_found'));
  app.onError((error) => responseForError(error, log));
  return app;
}
