/**
 * What keeps the local stack from outliving its reason to run:
 * - `terminateOnExit`: the private redis-server processes are signalled from an `exit`
 *   listener (synchronous, the only code that runs there) when the stack's process ends
 *   without stopping them — a forced exit on a repeated signal, an uncaught error.
 * - `watchParent`: a stack started through a wrapper that does not pass signals on (an npm
 *   script without `exec`, whose `sh` dies of SIGTERM and leaves node behind; an npm killed
 *   outright) is re-parented when that wrapper dies, and nothing else tells it so. Polling the
 *   parent pid notices (Linux and macOS re-parent orphans; Windows does not, and never fires).
 */

const guarded = new Set<number>();
let listening = false;

function terminateAll(): void {
  for (const pid of guarded) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  guarded.clear();
}

/** SIGTERMs `pids` if this process exits before the returned release is called (once they are stopped). */
export function terminateOnExit(pids: readonly number[]): () => void {
  if (!listening) {
    process.once('exit', terminateAll);
    listening = true;
  }
  for (const pid of pids) guarded.add(pid);
  return () => {
    for (const pid of pids) guarded.delete(pid);
  };
}

export const PARENT_POLL_MS = 500;

/**
 * Calls `onOrphaned(parent)` once, when this process's parent is no longer `parent`; the
 * returned function stops watching. The timer does not keep the process alive. Pass the parent
 * read when the process started: read at the call, a wrapper that died before it (while the
 * stack was starting, or in the instant after it said so) would be missed for good, the new
 * parent taken for the one to watch.
 */
export function watchParent(onOrphaned: (parentPid: number) => void, parent: number = process.ppid, intervalMs = PARENT_POLL_MS): () => void {
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onOrphaned(parent);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
