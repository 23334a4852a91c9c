/** What every benchmark scenario reports from its child process. */
export interface ScenarioResult {
  readonly entries: number;
  readonly seconds: number;
  /** Redis round trips the consumer made, when the scenario can count them. */
  readonly roundTrips?: number;
  readonly rounds?: number;
  /** Peak resident set of the consuming process, MiB. */
  readonly rssPeakMiB: number;
  readonly extra?: Record<string, number>;
}

export interface StreamParams {
  readonly redisUrl: string;
  readonly stream: string;
  readonly group: string;
  readonly count: number;
  readonly batch: number;
}

export function rssPeakMiB(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}
