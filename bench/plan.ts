/** How much work a run does: `--quick` (≤ ~3 minutes on 2 cores) or full (≤ ~12). */
export const SIZES = { '300B': 300, '64KiB': 64 * 1024 } as const;
export type Size = keyof typeof SIZES;

export interface Plan {
  readonly reps: number;
  /** Entries per 300 B run (product, raw, raw_verify at every batch). */
  readonly small: number;
  readonly large: number;
  readonly perMessage: number;
  readonly bull: number;
  readonly rest: number;
  readonly httpSingle: number;
  readonly httpBatches: number;
  /**
   * Entries on the one stream the scale-out processes share. Each of 4 processes takes a
   * quarter: at 2,000 apiece (the plan before 2026-12-06) a child's timed part lasted ~50 ms,
   * and what a run pays once (its first claim's proof, code not yet optimised by V8) outweighed
   * the throughput the case is meant to show: the product's Node CPU per entry came out at
   * 25–36 µs against 16–20 µs at 20,000 entries per run, raw_verify's far less affected.
   */
  readonly scale: number;
  /** Entries on each of the three Cluster streams (one process each), sized for the same reason. */
  readonly clusterPerStream: number;
  /** Entries on the hot-key stream of `--flow` (4 processes, 10 flow keys). */
  readonly hot: number;
  /** Entries of each one-process `--flow` run over 1,000 flow keys: a second or more of steady state. */
  readonly flow: number;
  /** Latency samples (≥ 2,000 so the p99 rests on ≥ 20 of them) and the publish rate. */
  readonly latencyMessages: number;
  readonly latencyRate: number;
  /** Entries of the busy drain whose commands per 1,000 the command cost reports. */
  readonly commandCostEntries: number;
}

export const QUICK: Plan = {
  reps: 3,
  small: 6_000,
  large: 600,
  perMessage: 2_000,
  bull: 3_000,
  rest: 2_000,
  httpSingle: 1_000,
  httpBatches: 30,
  scale: 40_000,
  clusterPerStream: 12_000,
  hot: 8_000,
  flow: 40_000,
  latencyMessages: 2_000,
  latencyRate: 250,
  commandCostEntries: 2_000,
};

export const FULL: Plan = {
  reps: 5,
  small: 20_000,
  large: 3_000,
  perMessage: 5_000,
  bull: 10_000,
  rest: 5_000,
  httpSingle: 3_000,
  httpBatches: 100,
  scale: 160_000,
  clusterPerStream: 40_000,
  hot: 40_000,
  flow: 100_000,
  latencyMessages: 2_500,
  latencyRate: 100,
  commandCostEntries: 5_000,
};

/** Untimed warm-up workload per child (see bench/child.ts), the same for every contender: the least one gets. */
export const WARMUP: Record<Size, number> = { '300B': 2_000, '64KiB': 500 };

/**
 * Rounds a TCP stream consumer runs untimed before it is measured. The product's per-round
 * code reaches its steady speed only after about 1,000–1,500 rounds in a fresh process (one
 * process, batch 100, 40,000-entry passes: 60k, 73k, 80k, 95k, 94k entries/s; the CPU profile
 * of the first pass against the fifth: product code 120 → 49 ms, V8's compiler 44 → 9 ms),
 * raw loops far sooner. A warm-up of 20 rounds (2,000 entries, the plan before 2026-12-06)
 * measured how fast the product's code gets compiled, not its throughput.
 */
export const WARMUP_ROUNDS = 1_000;
/** 300 B entries on each warm-up stream: the longest warm-up any case runs. */
export const WARM_STREAM_ENTRIES = 100_000;

/** A 300 B TCP case's warm-up: WARMUP_ROUNDS of its batch, at least WARMUP['300B'], at most the warm-up stream. */
export function warmupEntries(batch: number): number {
  return Math.min(WARM_STREAM_ENTRIES, Math.max(WARMUP['300B'], batch * WARMUP_ROUNDS));
}
/** Latency samples before this are dropped: the first second of a fresh process. */
export const LATENCY_WARMUP_MESSAGES = 100;
/** Process counts of the one-stream scale-out (issue 15 item 5). */
export const SCALE_PROCESSES = [1, 2, 4] as const;
/** Batch of the scale-out runs: the consumer config's default. */
export const SCALE_BATCH = 100;
