/**
 * The local stack as a user starts it (`saga-streams dev`, REDIS_URL unset): it starts a
 * private redis-server, serves the API, runs the example saga to one completed and one
 * compensated order, and a third whose payment answers after its timeout — compensated when
 * the timeout fires, its late charge refunded (visible in its JSON report lines; the stack
 * moves due scheduled events itself, see local/consumer-loops.ts), and SIGINT stops everything it
 * started — the private Redis port is closed afterwards and the process exits 0; its ops
 * dashboard answers with the generated admin token only; restarted on
 * the same folder, its PGlite database still holds the orders. Without
 * redis-server on PATH it fails with the command that installs it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, symlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_PGLITE_DIR } from '../../local/local-database';
import { REDIS_SERVER_INSTALL_HINT } from '../../local/redis-server';
import { pgliteTemplate } from '../postgres/support/databases';
import { REPO_ROOT } from '../cli/fixture';

const BIN = join(REPO_ROOT, 'bin', 'saga-streams.mjs');
const STARTUP_MS = 45_000;

type Line = Record<string, unknown>;

/** The child's stdout JSON lines, and a way to wait for one matching a predicate. */
function jsonLines(child: ChildProcessWithoutNullStreams) {
  const lines: Line[] = [];
  const waiters: Array<{ match: (line: Line) => boolean; resolve: (line: Line) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text) as Line;
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    lines,
    /** The first line matching `match` (already seen, or to come). */
    waitFor(match: (line: Line) => boolean, what: string): Promise<Line> {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${what} within ${STARTUP_MS} ms`)), STARTUP_MS);
        waiters.push({ match, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      });
    },
    /** Resolves once `done()` holds over the lines seen so far. */
    until(done: () => boolean, what: string): Promise<void> {
      return this.waitFor(() => done(), what).then(() => undefined);
    },
  };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
  });
}

/** The dashboard's admin token the stack generated and printed (stderr). */
function adminToken(stderr: string): string {
  const match = /export OPS_ADMIN_TOKEN=(dev-admin-\S+)/.exec(stderr);
  if (!match) throw new Error(`no generated admin token in stderr:\n${stderr}`);
  return match[1]!;
}

const exited = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

describe('saga-streams dev (npm start)', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves the API, runs the example saga to a completed, a compensated and a timed-out order, and stops everything on SIGINT', async () => {
    const { REDIS_URL: _ignored, DATABASE_URL: _noDatabase, ...env } = process.env;
    // A working folder of its own, its PGlite folder pre-made (initdb in WASM is slow).
    const cwd = mkdtempSync(join(tmpdir(), 'saga-streams-dev-'));
    cpSync(await pgliteTemplate(), join(cwd, LOCAL_PGLITE_DIR), { recursive: true });
    child = spawn(process.execPath, [BIN, 'dev', '--port', '0', '--config', join(REPO_ROOT, 'saga.config.ts')], { cwd, env });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const out = jsonLines(child);

    const started = await out.waitFor((l) => l.msg === 'local stack started', 'start line').catch((e) => {
      throw new Error(`${(e as Error).message}\nstderr:\n${stderr}`);
    });
    expect(started).toMatchObject({ deployment: 'order-saga', detail: { privateRedis: true } });
    const { api, redis } = started.detail as { api: string; redis: string };
    const redisPort = Number(new URL(redis).port);
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
    expect(stderr).toMatch(/export SHOP_PRODUCER_TOKEN=dev-shop-/);
    expect((started.detail as { dashboard: string }).dashboard).toBe(`${api}/ops`);

    const completed = await out.waitFor((l) => l.msg === 'saga finished' && (l.detail as { status?: string }).status === 'completed', 'completed order');
    const finishedAs = (failure: string) => (l: Line) => l.msg === 'saga finished' && (l.detail as { failure?: string }).failure === failure;
    const compensated = await out.waitFor(finishedAs('charge_declined'), 'compensated order');
    expect(completed.detail).toMatchObject({ workflow: 'order', steps: ['reserve', 'charge', 'ship'] });
    expect(compensated.detail).toMatchObject({ workflow: 'order', status: 'compensated', steps: [] });
    // The third order's payment answers 5 s late, its timeout fires after 2 s: compensated, then refunded.
    const timedOut = await out.waitFor(finishedAs('step_timed_out'), 'timed-out order');
    expect(timedOut.detail).toMatchObject({ workflow: 'order', status: 'compensated', steps: [] });
    expect((timedOut.detail as { late?: string }).late).toBeUndefined();
    const refunded = await out.waitFor((l) => finishedAs('step_timed_out')(l) && (l.detail as { late?: string }).late === 'refunded', 'late charge refunded');
    expect(refunded.detail).toMatchObject({ instance: (timedOut.detail as { instance: string }).instance, status: 'compensated' });
    // Report lines follow each run's settle; a run may still be settling when its handler finished the saga.
    const acked = (consumer: string) => out.lines.filter((l) => l.msg === 'poll run' && l.consumer === consumer).reduce((sum, l) => sum + Number(l.acked), 0);
    // The timed-out order adds a reservation and a release, a charge and a refund, and five results
    // for the orchestrator (reserve, the timeout, release, the late charge, the refund).
    const expected = { 'order-intake': 3, inventory: 5, payment: 4, shipping: 1, orchestrator: 11 };
    const totals = () => Object.fromEntries(Object.keys(expected).map((consumer) => [consumer, acked(consumer)]));
    await out.until(() => Object.entries(expected).every(([consumer, n]) => acked(consumer) >= n), 'report lines of every step').catch(() => {});
    expect(totals()).toEqual(expected);
    expect(out.lines.filter((l) => l.msg === 'poll run').every((l) => l.deadLettered === 0 && l.retained === 0)).toBe(true);

    // The ops dashboard replaces the status page; its admin token is generated and printed.
    const admin = { authorization: `Bearer ${adminToken(stderr)}` };
    const overview = (await (await fetch(`${api}/ops/overview.json`, { headers: admin })).json()) as { consumers: Array<{ backlog: { consumer: string; pending: number } }> };
    expect(overview.consumers.map((c) => [c.backlog.consumer, c.backlog.pending])).toEqual([
      ['order-intake', 0],
      ['orchestrator', 0],
      ['inventory', 0],
      ['payment', 0],
      ['shipping', 0],
    ]);
    const root = await fetch(`${api}/`, { redirect: 'manual' });
    expect(root.headers.get('location')).toBe('/ops');
    expect((await fetch(`${api}/ops`, { headers: { accept: 'text/html' }, redirect: 'manual' })).headers.get('location')).toBe('/ops/login');
    const page = await fetch(`${api}/ops`, { headers: { ...admin, accept: 'text/html' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toMatch(/order-intake[\s\S]*Oldest pending age over time[\s\S]*<circle class="point"[\s\S]*Recent runs/);
    expect(await portOpen(redisPort)).toBe(true);

    // Generated HMAC keys are never printed (only the producer token, for the curl).
    expect(stderr + JSON.stringify(out.lines)).not.toMatch(/hex:[0-9a-f]{64}/);

    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
    expect(out.lines.at(-1)).toMatchObject({ msg: 'local stack stopped' });
    expect(await portOpen(redisPort)).toBe(false);
    expect(await portOpen(Number(new URL(api).port))).toBe(false);

    // State survives a restart: the orders are in PGlite on disk, not in the process.
    child = spawn(process.execPath, [BIN, 'dev', '--port', '0', '--no-demo', '--config', join(REPO_ROOT, 'saga.config.ts')], { cwd, env });
    let restartErr = '';
    child.stderr.on('data', (d) => (restartErr += d));
    const again = jsonLines(child);
    const restarted = await again.waitFor((l) => l.msg === 'local stack started', 'restart line');
    // stderr's banner follows the start line on stdout.
    for (let waited = 0; !restartErr.includes('Ctrl-C') && waited < STARTUP_MS; waited += 50) await new Promise((r) => setTimeout(r, 50));
    const headers = { authorization: `Bearer ${adminToken(restartErr)}` };
    const panels = ((await (await fetch(`${(restarted.detail as { api: string }).api}/ops/overview.json`, { headers })).json()) as { panels: Record<string, { orders: Array<{ order_id: string; status: string }> }> }).panels;
    const demo = panels['Example saga']!;
    expect(demo.orders.map((o) => [o.order_id, o.status]).sort()).toEqual([
      [String((compensated.detail as { instance: string }).instance), 'compensated'],
      [String((timedOut.detail as { instance: string }).instance), 'compensated'],
      [String((completed.detail as { instance: string }).instance), 'completed'],
    ]);
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  }, 180_000);

  it('without REDIS_URL and without redis-server, exits 1 naming the install command', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'saga-streams-path-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    const { REDIS_URL: _ignored, ...env } = process.env;
    child = spawn(process.execPath, [BIN, 'dev', '--port', '0'], { cwd: REPO_ROOT, env: { ...env, PATH: bin } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    expect(await exited(child)).toBe(1);
    expect(stderr).toContain(REDIS_SERVER_INSTALL_HINT);
  });
});
