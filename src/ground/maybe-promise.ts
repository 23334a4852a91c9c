/**
 * Results that are ready now on the hot path (native HMAC) and later elsewhere (Web Crypto).
 * Tested by shape, not `instanceof Promise`: a promise from another realm or a thenable
 * must never pass for a ready result — in an admission check that would fail open.
 */
export type MaybePromise<T> = T | PromiseLike<T>;

export function isPromiseLike<T>(value: MaybePromise<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
