/** Median and spread of a figure over a run's repetitions. */
export interface Stat {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export const stat = (xs: readonly number[]): Stat => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** A figure for a table: whole numbers from 100 up, two decimals below, `n/a` when there is none. */
export const fmt = (n: number | null | undefined) =>
  typeof n !== 'number' || !Number.isFinite(n) ? 'n/a' : Math.abs(n) >= 100 ? Math.round(n).toString() : n.toFixed(2);
