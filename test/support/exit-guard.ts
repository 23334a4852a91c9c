/**
 * Servers the global setups start must not outlive the test run. Teardown stops them when the
 * run ends, failed tests included; but on SIGINT/SIGTERM vitest calls `process.exit()` without
 * tearing down, and then only an `exit` listener runs — synchronously. So each setup registers
 * the pids it started here, and this signals whatever is still registered when the process
 * exits. A setup unregisters its pids once its own stop has run (a pid is reused after that).
 */
import { readdirSync, readFileSync } from 'node:fs';

interface Guard {
  readonly signal: NodeJS.Signals;
  readonly afterwards?: () => void;
}

const guarded = new Map<number, Guard>();
let listening = false;

function signalAll(): void {
  for (const [pid, { signal, afterwards }] of guarded) {
    try {
      process.kill(pid, signal);
      afterwards?.();
    } catch {
      // already gone, or its leftovers could not be removed: nothing more to do at exit
    }
  }
  guarded.clear();
}

/**
 * Sends `signal` to `pid` if this process exits before the returned release is called, then
 * runs `afterwards` (synchronous: removing the server's folder).
 */
export function killOnExit(pid: number, signal: NodeJS.Signals = 'SIGKILL', afterwards?: () => void): () => void {
  if (!listening) {
    process.once('exit', signalAll);
    listening = true;
  }
  guarded.set(pid, { signal, afterwards });
  return () => void guarded.delete(pid);
}

/**
 * This process's children whose command is `name` (Linux /proc; empty elsewhere): for servers
 * started through helpers that hand back only a stop function (local/redis-server.ts's Cluster).
 */
export function childPidsNamed(name: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid ..."; comm may hold spaces or parentheses, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm === name) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}
