/**
 * Waiting between empty rounds in continuous mode on clients that cannot block (REST): a
 * plain timer that an abort signal cuts short. TCP clients wait inside their fresh read
 * instead (`XREADGROUP … BLOCK`, see ClaimPlan.blockMs).
 */

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
