/** Waiting for a promise at most so long: the one timeout helper of the core. */

/**
 * Resolves like `work`, or rejects once `ms` pass first: with `expired()` when given,
 * else with "no reply within <ms> ms". A late rejection of `work` is swallowed (the
 * caller was already told).
 */
export function withTimeLimit<T>(work: Promise<T>, ms: number, expired?: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      work.catch(() => {});
      reject(expired?.() ?? new Error(`no reply within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
