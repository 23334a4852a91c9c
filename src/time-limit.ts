/** Waiting for a promise at most so long: the one timeout helper of the core. */

/** Resolves like `work`, or rejects with "no reply within <ms> ms" once `ms` pass first. */
export function withTimeLimit<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no reply within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
