/**
 * `.saga-streams/dev.json`: what a running local stack shares with the CLI in the same
 * folder — the environment it runs with (its Redis URL and the development secrets it
 * generated), its API URL and its pid. The file is git-ignored and written mode 0600
 * because it holds signing keys (and a REDIS_URL you exported may hold a password); nothing
 * prints its values, only its path.
 *
 * The secrets outlive the stack: the next start reuses them, so entries signed in an
 * earlier run (still pending in a Redis that kept them) verify. The `stack` part is only
 * believed while its pid is alive — a crashed stack leaves a stale one behind.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writePrivateFile } from './private-file';

export const DEV_FILE = join('.saga-streams', 'dev.json');

export interface DevStackInfo {
  readonly pid: number;
  readonly apiUrl: string;
  /** The name of the Redis URL variable (`redis.tcp.urlEnv`); its value is in `env`. */
  readonly redisUrlEnv: string;
  readonly startedAt: string;
}

export interface DevFile {
  /** Variable → value: the generated secrets, and while running the stack's Redis URL. */
  readonly env: Readonly<Record<string, string>>;
  /** Present while a stack runs (removed on a clean stop). */
  readonly stack?: DevStackInfo;
}

export function devFilePath(cwd: string): string {
  return join(cwd, DEV_FILE);
}

/** The file's content, or undefined when it is missing or not ours (never throws). */
export function readDevFile(cwd: string): DevFile | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(devFilePath(cwd), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { env, stack } = parsed as { env?: unknown; stack?: unknown };
  if (typeof env !== 'object' || env === null) return undefined;
  const strings = Object.entries(env).filter((pair): pair is [string, string] => typeof pair[1] === 'string');
  const info = stack as Partial<DevStackInfo> | undefined;
  const valid = info && Number.isInteger(info.pid) && typeof info.apiUrl === 'string' && typeof info.redisUrlEnv === 'string';
  return { env: Object.fromEntries(strings), ...(valid ? { stack: info as DevStackInfo } : {}) };
}

/** Written whole then renamed, so a reader never sees half a file; 0600 from the first byte. */
export function writeDevFile(cwd: string, content: DevFile): string {
  const path = devFilePath(cwd);
  mkdirSync(dirname(path), { recursive: true });
  writePrivateFile(path, `${JSON.stringify(content, null, 2)}\n`);
  return path;
}

/** True when a process with this pid exists (EPERM: it exists, owned by someone else). */
export function processAlive(pid: number): boolean {
  // 0 and negative pids name process groups, which kill(…, 0) always finds: never a stack.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running stack's environment, or undefined when no live stack wrote the file. */
export function runningStack(cwd: string): { readonly path: string; readonly file: DevFile; readonly stack: DevStackInfo } | undefined {
  const file = readDevFile(cwd);
  if (!file?.stack || !processAlive(file.stack.pid)) return undefined;
  return { path: devFilePath(cwd), file, stack: file.stack };
}
