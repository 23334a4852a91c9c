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
  /** What the Redis server(s) the run used spent on it, measured by the parent around the timed part. */
  readonly redis?: RedisFigures;
}

/** Redis's side of a run, per entry: from `INFO cpu` and `INFO commandstats` deltas (bench/redis-info.ts). */
export interface RedisFigures {
  /** used_cpu_user + used_cpu_sys of every server the run used (a Cluster's masters summed), µs per entry. */
  readonly cpuMicrosPerEntry: number;
  /**
   * Per command (`xreadgroup`, `evalsha`, `client|setinfo`): calls per 1,000 entries and the
   * command's own µs per entry. A script's µs include the commands it calls, which also
   * appear on their own rows, and no row holds Redis's network I/O: rows do not add up.
   */
  readonly commands: Record<string, { readonly callsPer1k: number; readonly microsPerEntry: number }>;
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
  /** The product's retry backoff (consumer config `retry.backoff`); default: the config's (exponential). */
  readonly backoff?: 'fixed' | 'exponential';
  /** The product's flow control (consumer config `flow`); default: none. */
  readonly flow?: { readonly limit: number; readonly order?: 'none' | 'strict' };
  /** The product's rate limit (consumer config `rateLimit`); default: none. */
  readonly rateLimit?: { readonly limit: number; readonly perMs: number };
}

export function rssPeakMiB(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}

/** The per-entry Node keys of a stream scenario's `extra`; side-by-side processes are aggregated over all their entries. */
export const NODE_CPU_KEYS = ['nodeCpuMicrosPerEntry', 'nodeCpuUserMicrosPerEntry', 'nodeCpuSystemMicrosPerEntry', 'involuntaryContextSwitchesPer1k'] as const;

/** What the consuming process spent on its timed part, per entry (the `extra` keys of a stream scenario). */
export interface NodeCpuFigures {
  readonly nodeCpuMicrosPerEntry: number;
  readonly nodeCpuUserMicrosPerEntry: number;
  readonly nodeCpuSystemMicrosPerEntry: number;
  /** Times the kernel took the core away while the process could still run: how much the load disturbed this run. */
  readonly involuntaryContextSwitchesPer1k: number;
}

/**
 * Starts measuring the process's CPU (user and system apart: system time is the socket
 * work, user time the loop's own) and involuntary context switches; the returned function
 * gives them per entry for the entries the timed part handled.
 */
export function startCpuMeter(): (entries: number) => NodeCpuFigures {
  const cpu = process.cpuUsage();
  const switches = process.resourceUsage().involuntaryContextSwitches;
  return (entries) => {
    const used = process.cpuUsage(cpu);
    const involuntary = process.resourceUsage().involuntaryContextSwitches - switches;
    const per = (x: number) => (entries > 0 ? x / entries : Number.NaN);
    return {
      nodeCpuMicrosPerEntry: per(used.user + used.system),
      nodeCpuUserMicrosPerEntry: per(used.user),
      nodeCpuSystemMicrosPerEntry: per(used.system),
      involuntaryContextSwitchesPer1k: per(involuntary * 1000),
    };
  };
}

/** Epoch milliseconds on the monotonic clock, comparable across processes of one machine. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
