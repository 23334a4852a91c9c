/**
 * Checking that a stopped stack left nothing behind: the live processes of a process group
 * (Linux /proc; a zombie — exited, not yet reaped by whoever inherited it — is not live),
 * and whether anything still answers on a loopback port.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Socket } from 'node:net';

/** Pids of the processes in group `pgid` that have not exited. */
export function livePidsInGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces or parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** What each pid runs (for failure messages). */
export function describePids(pids: readonly number[]): string {
  return pids
    .map((pid) => {
      try {
        return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
      } catch {
        return `${pid} (gone)`;
      }
    })
    .join('\n');
}

/** Resolves once group `pgid` has no live process; fails listing them after `timeoutMs`. */
export async function groupEnds(pgid: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const live = livePidsInGroup(pgid);
    if (live.length === 0) return;
    if (Date.now() > until) throw new Error(`still running ${timeoutMs} ms later, in process group ${pgid}:\n${describePids(live)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGKILLs what is left of group `pgid` (test cleanup). */
export function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // nothing left
  }
}

/** True when something accepts a connection on the loopback port. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
  });
}
