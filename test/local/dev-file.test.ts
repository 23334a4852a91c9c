/**
 * The local stack started the way `npm start` starts it (`sh -c` with package.json's start
 * script) and the CLI beside it. The stack writes `.saga-streams/dev.json` (mode 0600; its
 * path printed, no key value printed) holding its Redis URL, secrets and pid; `publish`,
 * `poll`, `backlog` and `dlt list` in that folder without REDIS_URL use it and say so, an
 * exported REDIS_URL still wins; a second stack in the folder is refused. SIGTERM of the top pid stops node and its redis-server
 * and frees the API port (with `node …` not exec'd, sh died and node lived on). After the
 * stop the file no longer points at a stack, and the next start keeps its secrets.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run';
import { DEV_FILE, readDevFile } from '../../local/dev-file';
import { LOCAL_PGLITE_DIR } from '../../local/local-database';
import { freePort } from '../../local/redis-server';
import { pgliteTemplate } from '../postgres/support/databases';
import { recordingIo, REPO_ROOT } from '../cli/fixture';

const CONFIG = join(REPO_ROOT, 'saga.config.ts');
const START_SCRIPT = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
const STARTUP_MS = 45_000;
const STOP_MS = 5_000;

/** The environment of a user who exported nothing: no Redis, database or secret variables. */
function bareEnv(): Record<string, string | undefined> {
  const { REDIS_URL: _r, DATABASE_URL: _d, ...env } = process.env;
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/_KEY$|_TOKEN$/.test(name)));
}

/** A project folder like the repository's root for `npm start`: bin/ linked, PGlite pre-made (initdb in WASM is slow). */
async function projectFolder(): Promise<string> {
  const cwd = mkdtempSync(join(tmpdir(), 'saga-streams-devfile-'));
  symlinkSync(join(REPO_ROOT, 'bin'), join(cwd, 'bin'));
  cpSync(await pgliteTemplate(), join(cwd, LOCAL_PGLITE_DIR), { recursive: true });
  return cwd;
}

interface Started {
  readonly child: ChildProcessWithoutNullStreams;
  readonly api: string;
  readonly redisPort: number;
  stderr(): string;
  stdout(): string;
}

/** What npm does for `npm start -- args`: sh -c "<start script> args". */
async function npmStart(cwd: string): Promise<Started> {
  const child = spawn('sh', ['-c', `${START_SCRIPT} --port 0 --no-demo --config ${CONFIG}`], { cwd, env: bareEnv() });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += d));
  const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line within ${STARTUP_MS} ms\nstderr:\n${stderr}`)), STARTUP_MS);
    createInterface({ input: child.stdout }).on('line', (text) => {
      stdout += `${text}\n`;
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.msg === 'local stack started') (clearTimeout(timer), resolve(line));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before starting\nstderr:\n${stderr}`)));
  });
  // The banner follows the start line on stderr.
  while (!stderr.includes('Ctrl-C stops everything.')) await new Promise((resolve) => setTimeout(resolve, 20));
  const detail = started.detail as Record<string, unknown>;
  return { child, api: String(detail.api), redisPort: Number(new URL(String(detail.redis)).port), stderr: () => stderr, stdout: () => stdout };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
  });
}

async function closedWithin(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!(await portOpen(port))) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** `saga-streams <argv>` in `cwd`, in-process, with the user's bare environment plus `env`. */
async function cli(cwd: string, argv: string[], env: Record<string, string> = {}) {
  const io = recordingIo({ ...bareEnv(), ...env }, cwd);
  const code = await runCli(['--config', CONFIG, ...argv], io);
  return { code, stdout: io.stdout.join('\n'), stderr: io.stderr.join('\n') };
}

describe('the dev file (npm start beside the CLI)', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('publish, poll, backlog and dlt list find the running stack; SIGTERM stops all of it; the next start keeps the secrets', async () => {
    const cwd = await projectFolder();
    const first = await npmStart(cwd);
    children.push(first.child);
    const path = join(cwd, DEV_FILE);

    // The file: 0600, this stack's pid (exec: the pid npm signals is node's), URL and secrets.
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = readDevFile(cwd)!;
    expect(file.stack).toMatchObject({ pid: first.child.pid, apiUrl: first.api, redisUrlEnv: 'REDIS_URL' });
    expect(file.env.REDIS_URL).toBe(`redis://127.0.0.1:${first.redisPort}`);
    expect(file.env.ORDERS_SIGNING_KEY).toMatch(/^hex:[0-9a-f]{64}$/);
    // The dashboard's dev token too, so a restart keeps the operator logged in.
    expect(file.env.OPS_ADMIN_TOKEN).toMatch(/^dev-admin-/);
    // Its path is printed; no key from it ever is.
    expect(first.stderr()).toContain(`dev file     ${path}`);
    const keys = Object.entries(file.env).filter(([name]) => name.endsWith('_KEY'));
    expect(keys.length).toBe(8); // the example's seven signing keys and the orchestrator's timeout key
    for (const [, value] of keys) expect(first.stderr() + first.stdout()).not.toContain(value.slice(4));

    // A second stack in the same folder is refused before it starts anything (shared PGlite and dev file).
    const refused = await cli(cwd, ['dev', '--port', '0', '--no-demo']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`a local stack is already running in this folder (pid ${first.child.pid}, ${first.api})`);
    expect(readDevFile(cwd)!.stack?.pid).toBe(first.child.pid);

    const used = `REDIS_URL is not set; using the local stack (pid ${first.child.pid}) from ${path}`;
    // publish signs with the stack's ORDERS_SIGNING_KEY: the stack's own consumer verifies it and runs the saga.
    const payload = JSON.stringify({ order_id: 'cli-order-1', sku: 'sku-espresso', qty: 1, amount_cents: 1200 });
    const published = await cli(cwd, ['publish', 'order.placed', '--id', 'cli-placed-1', '--payload', payload]);
    expect(published).toMatchObject({ code: 0 });
    expect(published.stderr).toContain(used);
    const polled = await cli(cwd, ['poll', 'order-intake', '--json']);
    expect(polled).toMatchObject({ code: 0 });
    expect(polled.stderr).toContain(used);
    expect(JSON.parse(polled.stdout)).toMatchObject({ msg: 'poll run', consumer: 'order-intake', authRejected: 0, deadLettered: 0 });
    // The stack polls too (woken by the append): whoever ran it, the entry verified and was acked.
    let backlog = await cli(cwd, ['backlog', 'order-intake']);
    for (let tries = 0; tries < 50 && !/pending 0,/.test(backlog.stdout); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      backlog = await cli(cwd, ['backlog', 'order-intake']);
    }
    expect(backlog).toMatchObject({ code: 0 });
    expect(backlog.stdout).toMatch(/^order-intake {2}saga:\{orders\}:placed \/ orchestrator: pending 0, lag 0, dead letters 0, consumers \d+, length 1$/);
    const dlt = await cli(cwd, ['dlt', 'list', '--json']);
    expect(dlt).toMatchObject({ code: 0 });
    expect(dlt.stderr).toContain(used);
    // An exported REDIS_URL wins over the file (here: a port nobody listens on).
    const elsewhere = await freePort();
    const exported = await cli(cwd, ['backlog'], { REDIS_URL: `redis://127.0.0.1:${elsewhere}` });
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain(`127.0.0.1:${elsewhere} refused the connection`);
    expect(exported.stderr).not.toContain('using the local stack');

    // SIGTERM of the pid npm would signal: node and its redis-server are gone, the port is free.
    const exit = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGTERM');
    expect(await closedWithin(Number(new URL(first.api).port), STOP_MS)).toBe(true);
    expect(await closedWithin(first.redisPort, STOP_MS)).toBe(true);
    expect(await exit).toBe(0);

    // Stopped: the file keeps the secrets only, and the CLI no longer follows it.
    const after = readDevFile(cwd)!;
    expect(after.stack).toBeUndefined();
    expect(after.env.REDIS_URL).toBeUndefined();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const orphan = await cli(cwd, ['backlog']);
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toContain('REDIS_URL');
    expect(orphan.stderr).not.toContain('using the local stack');
    expect(orphan.stderr).toContain(`REDIS_URL is not set and the local stack of ${path} is not running`);

    // The next start signs with the same keys (entries signed before a restart still verify).
    const second = await npmStart(cwd);
    children.push(second.child);
    expect(second.stderr()).toContain('kept from the last run: INVENTORY_COMMAND_KEY');
    expect(second.stderr()).toContain(`admin token  kept from the last run: export OPS_ADMIN_TOKEN=${file.env.OPS_ADMIN_TOKEN}`);
    expect(first.stderr()).toContain('admin token  generated for this run: export OPS_ADMIN_TOKEN=');
    expect(readDevFile(cwd)!.env).toMatchObject(Object.fromEntries(Object.entries(file.env).filter(([name]) => name !== 'REDIS_URL')));
    second.child.kill('SIGINT');
    expect(await closedWithin(second.redisPort, STOP_MS)).toBe(true);
  }, 180_000);
});
