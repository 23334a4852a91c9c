/**
 * A schedule as a clock: whether it fires in a given minute, and its firings over a span.
 * The local stack ticks with it and the CDK code renders EventBridge's from it; no function
 * bundle imports it, so croner stays out of cold starts.
 */
import { Cron } from 'croner';
import { parseSchedule } from './schedule';

/** Parsed clocks by text: the local stack asks every minute, and a config holds few schedules. */
const clocks = new Map<string, Cron>();
const MAX_CLOCKS = 64;

function cronOf(text: string, field: string): Cron {
  const known = clocks.get(text);
  if (known) return known;
  parseSchedule(text, field);
  // A fixed UTC offset, not a time zone name: the same instants, without Intl lookups.
  const cron = new Cron(text.trim(), { utcOffset: 0, mode: '5-part' });
  if (clocks.size >= MAX_CLOCKS) clocks.clear();
  clocks.set(text, cron);
  return cron;
}

/** Whether the schedule fires in the UTC minute holding `at` (seconds are ignored). */
export function scheduleFiresAt(text: string, at: Date, field = 'schedule'): boolean {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  return cronOf(text, field).match(minute);
}

/** The instants the schedule fires at in [from, to), in order. */
export function scheduleFirings(text: string, from: Date, to: Date, field = 'schedule'): Date[] {
  const cron = cronOf(text, field);
  const firings: Date[] = [];
  // croner enumerates strictly after its start: begin one millisecond before `from`.
  for (let next = cron.nextRun(new Date(from.getTime() - 1)); next && next < to; next = cron.nextRun(next)) {
    firings.push(next);
  }
  return firings;
}
