/**
 * A seeded pseudo-random source (mulberry32): every random choice of a scenario — fault
 * instants, handler plans, poison order — comes from one seed, so a failure replays with
 * `npm run chaos -- --seed N --scenario name`.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** An independent stream derived from this seed and a label (e.g. one per child). */
  fork(label: string): Rng;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hashLabel(seed: number, label: string): number {
  let h = seed >>> 0 ^ 0x9e3779b9;
  for (let i = 0; i < label.length; i += 1) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    fork: (label) => createRng(hashLabel(seed, label)),
  };
}

/** A fresh seed for a run that was not given one (printed, so the run can be replayed). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
