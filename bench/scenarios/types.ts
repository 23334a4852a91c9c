/** What every benchmark scenario reports from its child process. */
export interface ScenarioResult {
  readonly entries: number;
  readonly seconds: number;
  /** Redis round trips the consumer made, when the scenario can count them. */
  readonly roundTrips?: number;
  readonly rounds?: number;
  /** Peak resident set of the consuming process, MiB. */
  readonly rssPeakMiB: number;
  /** Wall clock (epoch ms) around the timed part: processes running side by side are
   *  aggregated from the first start to the last end. */
  readonly startedAtMs?: number;
  readonly endedAtMs?: number;
  readonly extra?: Record<string, number>;
}

export interface StreamParams {
  readonly redisUrl: string;
  readonly stream: string;
  readonly group: string;
  /** Entries in the stream; with `shared`, other consumers take part of them. */
  readonly count: number;
  readonly batch: number;
  /** Redis consumer name; several processes on one group need their own. */
  readonly consumer?: string;
  /** Other processes read the same group: this one handles only a share of `count`. */
  readonly shared?: boolean;
  /** Run against these Cluster nodes instead of `redisUrl`. */
  readonly clusterNodes?: ReadonlyArray<{ host: string; port: number }>;
  /** The product's HMAC engine: the native fast path (default) or plain createHmac (item 4 comparison). */
  readonly hmac?: 'fast' | 'plain';
}

export function rssPeakMiB(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}

/** Node CPU (user + system) since `since`, in µs per entry: the process's own work, which a loaded machine disturbs far less than wall time. */
export function cpuMicrosPerEntry(since: NodeJS.CpuUsage, entries: number): number {
  const used = process.cpuUsage(since);
  return entries > 0 ? (used.user + used.system) / entries : Number.NaN;
}

/** Epoch milliseconds on the monotonic clock, comparable across processes of one machine. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
