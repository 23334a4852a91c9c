/**
 * The ops dashboard (issue 17 §1) as a Hono app, mounted by the publish API at `/ops` on every
 * platform and by the local stack. The shell: admin login (admin-auth.ts, login.ts), the gate
 * and CSRF check (guard.ts), the overview and recent-runs pages, and the sections
 * (sections.ts) mounted at `/ops/<name>` behind the same gate. Pages carry no script; the CSP
 * says so. Redis trouble is a 503 within ~1.5 s (failures.ts), never a hang or a stack trace.
 *
 * @example
 * app.route('/ops', createDashboardApp({ runtime, env, adminTokenEnv: 'OPS_ADMIN_TOKEN', log }));
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { DeploymentRuntime } from '../deployment/runtime';
import type { SecretEnv } from '../deployment/secrets';
import type { Logger } from '../web/log';
import { createAdminAuth } from './admin-auth';
import type { DashboardContext } from './contract';
import { boundedPort, dashboardError, failure } from './failures';
import { adminGuard } from './guard';
import { escapeHtml, frame, type FrameOptions } from './html';
import { mountLogin } from './login';
import { createLoginThrottle } from './login-throttle';
import { readOverview, renderOverview } from './overview';
import { readRecentRuns, renderRuns, type RunFilter } from './runs';
import { DASHBOARD_SECTIONS, type SectionEntry } from './section-list';

/** Where the publish API mounts the dashboard. */
export const DASHBOARD_BASE = '/ops';
/** Seconds between reloads of the overview. */
export const OVERVIEW_REFRESH_SECONDS = 10;

export interface DashboardAppOptions {
  readonly runtime: DeploymentRuntime;
  /** Where the admin token variable is read (at construction: a missing one fails start-up). */
  readonly env: SecretEnv;
  readonly adminTokenEnv: string;
  readonly log: Logger;
  readonly now?: () => number;
  /** Default: DASHBOARD_SECTIONS. */
  readonly sections?: readonly SectionEntry[];
  /** Read-only extras shown as JSON under the overview (the local stack's example saga). */
  readonly panels?: Readonly<Record<string, () => Promise<unknown>>>;
}

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('content-security-policy', CSP);
  c.res.headers.set('x-frame-options', 'DENY');
  c.res.headers.set('x-content-type-options', 'nosniff');
  c.res.headers.set('referrer-policy', 'same-origin');
  c.res.headers.set('cache-control', 'no-store');
};

function runFilter(query: (name: string) => string | undefined): RunFilter {
  const pick = (name: string) => query(name) || undefined;
  return { consumer: pick('consumer'), job: pick('job'), level: pick('level') };
}

async function readPanels(panels: DashboardAppOptions['panels'] = {}): Promise<Record<string, unknown>> {
  const entries = await Promise.all(Object.entries(panels).map(async ([title, read]) => [title, await read()] as const));
  return Object.fromEntries(entries);
}

export function createDashboardApp(options: DashboardAppOptions): Hono {
  const base = DASHBOARD_BASE;
  const now = options.now ?? Date.now;
  const { log } = options;
  const auth = createAdminAuth(options.adminTokenEnv, options.env, options.runtime.hmac);
  const attempts = { throttle: createLoginThrottle(), now, log };
  // Pages and sections alike read through a port that gives up after REDIS_WAIT_MS.
  const runtime: DeploymentRuntime = { ...options.runtime, port: boundedPort(options.runtime.port) };
  const sections = options.sections ?? DASHBOARD_SECTIONS;
  const frameOptions: FrameOptions = {
    deployment: runtime.config.name,
    base,
    nav: [
      { href: base, label: 'Overview' },
      { href: `${base}/runs`, label: 'Runs' },
      ...sections.map((s) => ({ href: `${base}/${s.name}`, label: s.title })),
    ],
  };
  const page = (title: string, body: string) => frame(title, body, frameOptions);

  const app = new Hono();
  app.use('*', securityHeaders);
  mountLogin(app, { auth, now, log, base, frameOptions, attempts });
  app.use('*', adminGuard({ auth, now, loginPath: `${base}/login`, attempts }));

  app.get('/', async (c) => {
    const [overview, panels] = await Promise.all([readOverview(runtime), readPanels(options.panels)]);
    const extras = Object.entries(panels).map(([title, value]) => `<h2>${escapeHtml(title)}</h2><pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`);
    return c.html(frame('Overview', renderOverview(overview, `${base}/runs`) + extras.join(''), { ...frameOptions, refresh: OVERVIEW_REFRESH_SECONDS }));
  });
  app.get('/overview.json', async (c) => {
    const [overview, panels] = await Promise.all([readOverview(runtime), readPanels(options.panels)]);
    return c.json({ ...overview, panels });
  });
  app.get('/runs', async (c) => {
    const filter = runFilter((name) => c.req.query(name));
    const runs = await readRecentRuns(runtime, filter);
    return c.html(page('Recent runs', renderRuns(runs, [...runtime.config.consumers.keys()], filter, `${base}/runs`)));
  });
  app.get('/runs.json', async (c) => c.json(await readRecentRuns(runtime, runFilter((name) => c.req.query(name)))));

  const context: DashboardContext = { runtime, page, now };
  for (const entry of sections) app.route(`/${entry.name}`, entry.section(context));

  app.notFound((c) => failure(c, 'route_not_found', 'Not found', 'No such dashboard page.'));
  app.onError((error, c) => dashboardError(c, error, log));
  return app;
}
