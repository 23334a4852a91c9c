/**
 * When a publish wakes pollers (SPEC §5.6): now for the streams that received entries, and
 * at the due time for scheduled events — the wake-up message itself (wake-up.ts) is the same,
 * sent with the platform's delay. Kept apart from wake-up.ts so the runtime, which sends
 * them, does not import the jobs that wake-up.ts reads the config with.
 */
import type { PublishResult } from '../publish/publisher';

/**
 * Sends a wake-up for `streams`, now or — for scheduled events — `delayMs` later. A sender
 * delays by its platform's own means (SQS `DelaySeconds`, Queues `delaySeconds`), rounded up
 * to whole seconds, and sends nothing for a delay beyond its platform's bound: those events
 * wait for the next scheduled poll. A sender without delays may wake at once (a wasted poll).
 */
export type WakeUpSender = (streams: readonly string[], delayMs?: number) => Promise<void>;

/** The longest delay of one message: SQS `DelaySeconds` (15 min), Cloudflare Queues `delaySeconds` (12 h). */
export const SQS_MAX_DELAY_SECONDS = 900;
export const QUEUES_MAX_DELAY_SECONDS = 43_200;

/**
 * The whole seconds a wake-up `delayMs` away is delayed by — rounded up, so a poller is
 * never woken before the due time — or undefined when that is beyond `maxSeconds`.
 */
export function wakeUpDelaySeconds(delayMs: number, maxSeconds: number): number | undefined {
  const seconds = Math.max(0, Math.ceil(delayMs / 1000));
  return seconds <= maxSeconds ? seconds : undefined;
}

export interface PlannedWakeUp {
  readonly streams: readonly string[];
  /** undefined: now; else ms from now (whole seconds, rounded up from the time left by the Redis clock). */
  readonly delayMs: number | undefined;
}

/**
 * The wake-ups a publish calls for: one now for every stream that received an entry (a
 * duplicate too: a retried request may follow a crash that sent no wake-up), and one per
 * distinct delay for scheduled events, at their due time by the Redis clock (SPEC §5.6).
 * Cancelled originals and scheduled duplicates whose due time Redis did not report wake
 * nobody. Streams in first-seen order; delayed wake-ups earliest first.
 */
export function plannedWakeUps(results: readonly PublishResult[]): PlannedWakeUp[] {
  const now = new Set<string>();
  const later = new Map<number, Set<string>>();
  for (const result of results) {
    const scheduled = result.scheduled;
    if (scheduled === undefined || scheduled.dueInMs === 0) now.add(result.stream);
    else if (!scheduled.cancelled && scheduled.dueInMs !== undefined) {
      const delayMs = Math.ceil(scheduled.dueInMs / 1000) * 1000;
      later.set(delayMs, (later.get(delayMs) ?? new Set()).add(result.stream));
    }
  }
  const planned: PlannedWakeUp[] = now.size > 0 ? [{ streams: [...now], delayMs: undefined }] : [];
  for (const delayMs of [...later.keys()].sort((a, b) => a - b)) planned.push({ streams: [...later.get(delayMs)!], delayMs });
  return planned;
}


/**
 * Sends the wake-ups a publish calls for, each on its own: one that fails is reported to
 * `onFailure` and the others still go (a lost wake-up only delays delivery to the next poll).
 */
export async function sendWakeUps(wakeUp: WakeUpSender, results: readonly PublishResult[], onFailure: (error: unknown, streams: readonly string[]) => void): Promise<void> {
  for (const { streams, delayMs } of plannedWakeUps(results)) {
    try {
      await (delayMs === undefined ? wakeUp(streams) : wakeUp(streams, delayMs));
    } catch (error) {
      onFailure(error, streams);
    }
  }
}
