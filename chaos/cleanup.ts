/**
 * Stopping what the chaos harness started, on every ending. Two layers:
 * - a Teardown per scenario: its steps (stop the poll processes, the proxy, the servers,
 *   remove the folders) run in reverse order of creation whatever failed, once, on a normal
 *   end or an exception; stopScenarios() runs every live one (a test that gave up on one);
 * - beneath it, every child process and temp folder the harness makes is tracked here, and
 *   killed (SIGKILL) and removed synchronously when this process exits — process.exit, an
 *   uncaught error, SIGINT or SIGTERM — where no promise can run any more.
 * A SIGKILL of this process cannot be caught: the poll processes then see their parent gone
 * and exit (chaos/child.ts); a redis-server cannot, and stays.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const children = new Set<ChildProcess>();
const folders = new Set<string>();
const liveTeardowns = new Set<Teardown>();
let installed = false;

/** How long the exit path waits for killed children to die before it removes their folders. */
const EXIT_WAIT_MS = 1_000;

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Tracks a child process until it exits; returns it. */
export function trackChild<T extends ChildProcess>(child: T): T {
  install();
  if (!isRunning(child)) return child;
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Tracks a folder until removeFolder; returns it. */
export function trackFolder(dir: string): string {
  install();
  folders.add(dir);
  return dir;
}

export function removeFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  folders.delete(dir);
}

/** Pids of the children still running (for tests and for a last report). */
export function trackedPids(): number[] {
  return [...children].filter(isRunning).map((child) => child.pid!);
}

/**
 * The steps that stop one scenario, run last-added first. run() runs each step once,
 * goes on past a step that fails, and resolves with the failures.
 */
export class Teardown {
  readonly #steps: Array<() => unknown> = [];
  #ran: Promise<unknown[]> | undefined;

  constructor() {
    liveTeardowns.add(this);
  }

  add(step: () => unknown): void {
    this.#steps.push(step);
  }

  run(): Promise<unknown[]> {
    this.#ran ??= this.#runSteps();
    return this.#ran;
  }

  async #runSteps(): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (let step = this.#steps.pop(); step; step = this.#steps.pop()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    liveTeardowns.delete(this);
    return failures;
  }
}

/** Runs the teardown of every scenario still live (one a test gave up waiting for). */
export async function stopScenarios(): Promise<void> {
  await Promise.all([...liveTeardowns].map((teardown) => teardown.run()));
}

/** The exit path: nothing asynchronous runs any more, so kill, wait a moment, remove. */
function stopNow(): void {
  const pids: number[] = [];
  for (const child of children) {
    if (!isRunning(child)) continue;
    child.kill('SIGKILL');
    pids.push(child.pid!);
  }
  children.clear();
  waitDeadSync(pids, EXIT_WAIT_MS);
  for (const dir of folders) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch {
      // a folder that cannot be removed now stays; the process is ending either way
    }
  }
  folders.clear();
}

/** Dead: gone, or a zombie (its files closed), per /proc; no /proc, no wait. */
function isDead(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

function waitDeadSync(pids: readonly number[], ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until && pids.some((pid) => !isDead(pid))) {
    // busy: the exit path has no event loop to wait on
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', stopNow);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = (): void => {
      stopNow();
      process.removeListener(signal, onSignal);
      // Others listening decide what happens next; alone, end as the signal would have.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
