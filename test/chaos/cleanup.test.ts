/**
 * A chaos run that ends badly stops what it started (issue 24 item 7): interrupted by
 * SIGTERM or SIGINT, ended by process.exit, or failing with an exception in the middle of
 * a scenario, it leaves no redis-server, no poll process and none of its temp folders.
 * The run is a real one (test/chaos/interrupted-scenario.ts) in a process of its own; this
 * test reads /proc for what it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { redisServerProcessName } from '../../local/redis-server';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'interrupted-scenario.ts');
const TIMEOUT_MS = 90_000;

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly zombie: boolean;
  readonly argv: string[];
  /** Its working directory (redis-server works in its --dir, and rewrites its command line). */
  readonly cwd: string;
}

function processes(): Proc[] {
  const list: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const cwd = fields[0] === 'Z' ? '' : readlinkSync(`/proc/${name}/cwd`);
      list.push({ pid: Number(name), ppid: Number(fields[1]), zombie: fields[0] === 'Z', argv, cwd });
    } catch {
      // gone meanwhile
    }
  }
  return list;
}

function descendants(root: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const proc of all) {
      if (parents.has(proc.ppid) && !parents.has(proc.pid)) {
        parents.add(proc.pid);
        found.push(proc);
        grew = true;
      }
    }
  }
  return found;
}

function isRedisServer(proc: Proc): boolean {
  // The binary SAGA_REDIS_SERVER picks (valkey-server, say) names its process after itself.
  return proc.argv[0]?.includes(redisServerProcessName()) ?? false;
}

/** The folders a started process works in: a redis-server's --dir, a poll process's bundle and ledger folders. */
function foldersOf(proc: Proc): string[] {
  if (isRedisServer(proc)) return [proc.cwd];
  const bundle = proc.argv.find((arg) => arg.endsWith('child.cjs'));
  if (!bundle) return [];
  const config = JSON.parse(proc.argv[proc.argv.indexOf(bundle) + 1]!) as { ledgerFile: string };
  return [dirname(bundle), dirname(config.ledgerFile)];
}

/** Live processes whose command line names one of the folders (a restarted server included). */
function runningIn(folders: readonly string[]): Proc[] {
  return processes().filter((proc) => !proc.zombie && folders.some((dir) => proc.cwd.startsWith(dir) || proc.argv.some((arg) => arg.includes(dir))));
}

function lines(child: ChildProcess, onLine: (line: string) => void): void {
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      onLine(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  });
}

function waitFor<T>(what: string, promise: Promise<T>, ms = 60_000): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms))]);
}

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

let started: { fixture?: ChildProcess; folders: string[]; handshake?: string } = { folders: [] };

afterEach(() => {
  // Whatever the outcome, leave nothing behind ourselves (the old code did): what the run
  // still has running is found before the run itself is killed, which it cannot outlive.
  const { fixture, handshake } = started;
  const left = fixture && fixture.exitCode === null && fixture.signalCode === null ? descendants(fixture.pid!) : [];
  const folders = [...new Set([...started.folders, ...left.flatMap(foldersOf)])].filter((dir) => dir !== '');
  fixture?.kill('SIGKILL');
  for (const proc of [...left, ...runningIn(folders)]) killQuietly(proc.pid);
  for (const dir of [...folders, handshake ?? '']) if (dir) rmSync(dir, { recursive: true, force: true });
  started = { folders: [] };
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Starts the fixture; resolves on `UP` with the folders of what it started, and a promise of each later line. */
async function startRun(mode: string): Promise<{ fixture: ChildProcess; folders: string[]; next: (line: string) => Promise<void>; exited: Promise<void> }> {
  const handshake = mkdtempSync(join(tmpdir(), 'saga-chaos-cleanup-test-'));
  const fixture = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode, join(handshake, 'go')], { stdio: ['ignore', 'pipe', 'inherit'] });
  started = { fixture, folders: [], handshake };
  const waiting = new Map<string, () => void>();
  lines(fixture, (line) => waiting.get(line)?.());
  const next = (line: string) => new Promise<void>((resolve) => waiting.set(line, resolve));
  const exited = new Promise<void>((resolve) => fixture.once('exit', () => resolve()));
  await waitFor('UP', Promise.race([next('UP'), exited.then(() => Promise.reject(new Error('the run ended before UP')))]));
  const mine = descendants(fixture.pid!);
  const folders = [...new Set(mine.flatMap(foldersOf))].filter((dir) => dir !== '');
  started.folders = folders;
  writeFileSync(join(handshake, 'go'), '');
  // What the scenario runs: one AOF redis-server, a poll process per group; their folders.
  expect(mine.filter(isRedisServer)).toHaveLength(1);
  expect(mine.filter((proc) => proc.argv.some((arg) => arg.endsWith('child.cjs'))).length).toBeGreaterThanOrEqual(2);
  expect(folders.some((dir) => dir.includes('saga-chaos-aof-'))).toBe(true);
  return { fixture, folders, next, exited };
}

function expectNothingLeft(folders: readonly string[]): void {
  expect(runningIn(folders).map((proc) => `${proc.pid} ${proc.argv.slice(0, 2).join(' ')}`)).toEqual([]);
  expect(folders.filter((dir) => existsSync(dir))).toEqual([]);
}

it.each(['SIGTERM', 'SIGINT'] as const)(
  'a run interrupted by %s stops its redis-server and poll processes and removes its folders',
  async (signal) => {
    const run = await startRun('wait');
    // Inside the fault schedule: the AOF server may be down or restarting.
    await new Promise((r) => setTimeout(r, 1_000));
    run.fixture.kill(signal);
    await waitFor('the run to end', run.exited, 30_000);
    await eventually(() => runningIn(run.folders).length === 0);
    expectNothingLeft(run.folders);
  },
  TIMEOUT_MS,
);

it(
  'a run ended by process.exit in the middle of a scenario stops what it started',
  async () => {
    const run = await startRun('exit');
    await waitFor('the run to end', run.exited, 30_000);
    await eventually(() => runningIn(run.folders).length === 0);
    expectNothingLeft(run.folders);
  },
  TIMEOUT_MS,
);

it(
  'a scenario that throws in the middle has stopped what it started once runScenario rejects',
  async () => {
    const run = await startRun('throw');
    await waitFor('CAUGHT', run.next('CAUGHT'), 60_000);
    // The run's process is still alive: the scenario's own teardown did this, not an exit handler.
    expectNothingLeft(run.folders);
  },
  TIMEOUT_MS,
);
