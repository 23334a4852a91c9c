/**
 * Emulated schedules for the local stack: whether a schedule (the 5-field cron expression
 * `defineConfig` accepts) fires in a given UTC minute. The meaning comes from the one
 * schedule module (src/deployment/schedule.ts, on croner) that also validates the config
 * and renders the EventBridge and Cloudflare forms, so local runs fire on the same instants
 * as the clouds.
 */
import { scheduleFiresAt } from '../src/deployment/schedule-clock';

/** Whether `expression` fires in the minute holding `at`; ConfigError when it is no schedule. */
export function cronMatches(expression: string, at: Date): boolean {
  return scheduleFiresAt(expression, at);
}

/** Ms from `now` to the start of the next minute. */
export function msToNextMinute(now: number): number {
  return 60_000 - (now % 60_000);
}
