/**
 * The package as a user gets it — `npm run build`, then `npm pack` — made once for the test
 * files that need it (pack.test.ts, scaffold-journey.test.ts), which vitest runs in separate
 * processes. Building holds a lock (a file created exclusively in TMPDIR; a holder that died
 * is taken over), and the tarball is kept in TMPDIR under a digest of every file the build
 * reads: a later file, or a later run on the same sources, reuses it; a changed source packs
 * again (and the older tarball is removed). `withBuildLock` serializes anything else that
 * rebuilds this repository's dist/ (init run from the checkout packs it).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SLOW = 600_000;

/** What `npm run build` and `npm pack` read (the installed tools through the hidden lockfile). */
const BUILD_INPUTS = ['src', 'cli', 'local', 'functions', 'infra', 'bin', 'scripts', 'package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'tsup.config.ts', 'tsconfig.json', 'tsconfig.build.json', 'README.md'];

const repoTag = createHash('sha256').update(REPO).digest('hex').slice(0, 12);
const CACHE = join(tmpdir(), `saga-streams-packed-${repoTag}`);
const LOCK = join(tmpdir(), `saga-streams-build-${repoTag}.lock`);

/** Runs a command; a failure carries its output. */
export function run(command: string, args: readonly string[], cwd: string, env: Record<string, string | undefined> = {}): string {
  try {
    return execFileSync(command, args, {
      cwd,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...env },
      encoding: 'utf8',
      timeout: SLOW,
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return [path];
  return (readdirSync(path, { recursive: true }) as string[]).map((entry) => join(path, entry)).filter((file) => statSync(file).isFile());
}

function sourceDigest(): string {
  const hash = createHash('sha256');
  const files = BUILD_INPUTS.flatMap((input) => filesUnder(join(REPO, input))).sort();
  for (const file of files) hash.update(`${relative(REPO, file)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `action` holding the repository's build lock. */
export async function withBuildLock<T>(action: () => T | Promise<T>): Promise<T> {
  const until = Date.now() + SLOW;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(LOCK, 'utf8').trim() || 'NaN');
      // A holder that died (or has not written its pid yet: give it the next round) .
      if (Number.isInteger(holder) && !alive(holder)) rmSync(LOCK, { force: true });
      else if (Date.now() > until) throw new Error(`${LOCK} held by pid ${holder} for ${SLOW} ms`);
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await action();
  } finally {
    unlinkSync(LOCK);
  }
}

/** The packed tarball of the current sources (built and packed once per change of sources). */
export async function packedTarball(): Promise<string> {
  return withBuildLock(() => {
    const digest = sourceDigest();
    const dir = join(CACHE, digest);
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const tarball = join(dir, `saga-streams-${version}.tgz`);
    if (existsSync(tarball)) return tarball;
    rmSync(CACHE, { recursive: true, force: true });
    const partial = `${dir}.partial`;
    mkdirSync(partial, { recursive: true });
    run('npm', ['run', 'build'], REPO);
    const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', partial], REPO)) as Array<{ filename: string }>;
    if (packed[0]?.filename !== `saga-streams-${version}.tgz`) throw new Error(`npm pack wrote ${packed[0]?.filename}`);
    renameSync(partial, dir);
    return tarball;
  });
}
