/**
 * Stream entry ids (`<ms>-<seq>`) compared exactly: 64-bit parts do not fit a double, so
 * each id becomes a fixed-width digit string whose text order is the id order.
 */
export function idKey(id: string): string {
  const dash = id.indexOf('-');
  return id.slice(0, dash).padStart(20, '0') + id.slice(dash + 1).padStart(20, '0');
}

export function compareIds(a: string, b: string): number {
  const ka = idKey(a);
  const kb = idKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
