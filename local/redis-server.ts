/**
 * Starts private redis-server processes on free loopback ports: one standalone server, a
 * primary with replicas, or a small Cluster built with `redis-cli --cluster create`. Used by
 * the test harness, the chaos harness, the benchmark and the local stack; never touches a
 * server it did not start. `SAGA_REDIS_SERVER` picks the server binary (e.g.
 * `/usr/bin/valkey-server`); the default is `redis-server` on PATH.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';

export const REDIS_SERVER_INSTALL_HINT = 'apt-get update && apt-get install -y redis-server';
/** The environment variable naming the server binary to start (a path or a name on PATH). */
export const REDIS_SERVER_ENV = 'SAGA_REDIS_SERVER';
const DEFAULT_SERVER = 'redis-server';

/** The server binary to start: `SAGA_REDIS_SERVER`, or `redis-server` on PATH. */
export function redisServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env[REDIS_SERVER_ENV]?.trim() || DEFAULT_SERVER;
}

/**
 * The command-line tool that goes with a server binary (Cluster creation, chaos failovers):
 * `valkey-cli` beside `valkey-server`, `redis-cli` beside `redis-server` — in the same folder
 * when the server was given as a path — and `redis-cli` on PATH when there is none.
 */
export function redisCliBinary(server: string = redisServerBinary()): string {
  let cli = clis.get(server);
  if (cli === undefined) {
    cli = cliBeside(server);
    clis.set(server, cli);
  }
  return cli;
}

const clis = new Map<string, string>();

function cliBeside(server: string): string {
  const name = basename(server).replace(/-server$/, '-cli');
  if (name === basename(server)) return 'redis-cli';
  if (server.includes('/')) {
    const beside = join(dirname(server), name);
    return existsSync(beside) ? beside : 'redis-cli';
  }
  return spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0 ? name : 'redis-cli';
}

/** The process name (`comm`, at most 15 characters on Linux) the started servers run under. */
export function redisServerProcessName(server: string = redisServerBinary()): string {
  return basename(server).slice(0, 15);
}
const STARTUP_TIMEOUT_MS = 10_000;

export interface RedisProcess {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Its process id (tests freeze it with SIGSTOP). */
  readonly pid: number;
  stop(): Promise<void>;
}

export interface RedisClusterProcess {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  stop(): Promise<void>;
}

export interface ServerBinary {
  /** As found (a path); pass it as SAGA_REDIS_SERVER. */
  readonly path: string;
  /** `redis`, `valkey`, … as its `--version` names it. */
  readonly family: string;
  readonly version: string;
}

/** Family and version from `<binary> --version` (`Redis server v=7.0.15 …`, `Valkey server v=8.0.1 …`). */
export function serverBinaryVersion(binary: string): ServerBinary | undefined {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const match = /^(\S+) server v=(\S+)/.exec(out.trim());
  return match ? { path: binary, family: match[1]!.toLowerCase(), version: match[2]! } : undefined;
}

const SERVER_NAMES = ['redis-server', 'valkey-server'];
const SERVER_DIRS = ['/usr/bin', '/usr/local/bin'];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every server binary on this machine: `redis-server` and `valkey-server` on PATH and in
 * /usr/bin and /usr/local/bin, plus `extra` paths (SAGA_TEST_SERVERS, say); one per distinct
 * file (a symlink counts once), the ones named in `extra` first.
 */
export function findServerBinaries(extra: readonly string[] = []): ServerBinary[] {
  const pathDirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const candidates = [...extra, ...SERVER_NAMES.flatMap((name) => [...pathDirs, ...SERVER_DIRS].map((dir) => join(dir, name)))];
  const found = new Map<string, ServerBinary>();
  for (const path of candidates) {
    if (!isExecutable(path)) continue;
    const real = realpathSync(path);
    if (found.has(real)) continue;
    const binary = serverBinaryVersion(path);
    if (binary) found.set(real, binary);
  }
  return [...found.values()];
}

/** True when the server binary to start (see redisServerBinary) runs. */
export function hasRedisServer(): boolean {
  return spawnSync(redisServerBinary(), ['--version'], { stdio: 'ignore' }).status === 0;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A free port below 55535 whose cluster bus port (+10000) is free too. */
export async function freePort(withBus = false): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await ephemeralPort();
    if (!withBus) return port;
    if (port < 55_535 && (await portIsFree(port + 10_000))) return port;
  }
  throw new Error('no free port pair found');
}

/** True once a server on the loopback port answers PING (a bare socket: no client to set up). */
export function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** Polls `check` every 50 ms until it holds, or fails naming `what` after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
  });
}

/**
 * Starts the server binary (redisServerBinary) on a loopback port with no RDB snapshots, and
 * resolves once it answers PING; `extra` adds options (persistence, cluster mode, replicaof).
 * Fails with the install hint when the binary is missing, and at once when the server exits
 * early; a server that never answers is killed. `onSpawn` sees the process as soon as it
 * exists (to stop it on exit). `binary` overrides the binary for this one server.
 */
export async function spawnRedisServer(
  port: number,
  dir: string,
  extra: readonly string[],
  onSpawn?: (child: ChildProcess) => void,
  binary: string = redisServerBinary(),
): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...extra];
  const child = spawn(binary, args, { stdio: 'ignore' });
  onSpawn?.(child);
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => {
      const hint = binary === DEFAULT_SERVER ? `install it with: ${REDIS_SERVER_INSTALL_HINT}` : `check ${REDIS_SERVER_ENV}, or unset it to use ${DEFAULT_SERVER}`;
      reject(new Error(`cannot start ${binary} (${error.message}); ${hint}`));
    });
    child.once('exit', (code) => reject(new Error(`${binary} on port ${port} exited early (code ${code})`)));
  });
  failed.catch(() => {});
  try {
    await Promise.race([waitUntil(() => pingRedis(port), `${binary} on port ${port}`), failed]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

const NO_AOF = ['--appendonly', 'no'];

export interface ServerOptions {
  readonly port?: number;
  /** AOF on (`appendonly yes`, fsync every second unless `appendfsync` says otherwise). */
  readonly appendonly?: boolean;
  readonly appendfsync?: 'always' | 'everysec' | 'no';
  /** Starts it as a replica of the server on this loopback port. */
  readonly replicaOf?: number;
  /** The server binary; default redisServerBinary(). */
  readonly binary?: string;
}

function serverArgs(options: ServerOptions): string[] {
  const args = options.appendonly ? ['--appendonly', 'yes', '--appendfsync', options.appendfsync ?? 'everysec'] : [...NO_AOF];
  if (options.replicaOf !== undefined) args.push('--replicaof', '127.0.0.1', String(options.replicaOf));
  return args;
}

export async function startRedisServer(options: ServerOptions = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'saga-streams-redis-'));
  let child: ChildProcess;
  try {
    child = await spawnRedisServer(port, dir, serverArgs(options), undefined, options.binary);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'saga-streams-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i += 1) {
      const port = await freePort(true);
      ports.push(port);
      children.push(
        await spawnRedisServer(port, dir, [...NO_AOF, '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`]),
      );
    }
    const created = spawnSync(
      redisCliBinary(),
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (created.status !== 0) throw new Error(`${redisCliBinary()} --cluster create failed: ${created.stderr || created.stdout}`);
    await waitUntil(async () => ports.every((p) => clusterStateOk(p)), 'cluster state ok');
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
}

function clusterStateOk(port: number): boolean {
  const info = spawnSync(redisCliBinary(), ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' });
  return info.stdout.includes('cluster_state:ok');
}
