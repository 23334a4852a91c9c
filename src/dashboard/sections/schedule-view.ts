/**
 * The Scheduled section's output — the JSON answer and the HTML fragment carry the same
 * things. JSON field names are the CLI's (`saga-streams schedule list --json`), so a script
 * written against one reads the other. Every value from Redis goes through `esc`.
 */
import type { CancelOutcome } from '../../schedule/cancel';
import type { ScheduledEvent, ScheduledPage } from '../../schedule/list';
import { isoTime } from '../html';
import type { ScheduleSummary } from '../queries/scheduled';
import { esc, formatAge, link, table } from './markup';

/** `in 3m` before the due time, `overdue by 2s` after it (a due event waits for the next move). */
export function relativeDue(dueMs: number, now: number): string {
  return dueMs > now ? `in ${formatAge(dueMs - now)}` : `overdue by ${formatAge(now - dueMs)}`;
}

function dueHtml(dueMs: number, now: number): string {
  const iso = isoTime(dueMs);
  return `<time datetime="${esc(iso)}">${esc(iso)}</time> (${esc(relativeDue(dueMs, now))})`;
}

export function summaryJson(s: ScheduleSummary) {
  return s.problem === undefined
    ? { stream: s.stream, schedulable: true, scheduled: s.total, next_deliver_at: s.nextDueMs === undefined ? null : isoTime(s.nextDueMs), problem: null }
    : { stream: s.stream, schedulable: false, scheduled: 0, next_deliver_at: null, problem: s.problem };
}

export function eventJson(event: ScheduledEvent, now: number) {
  return { event_id: event.eventId, event_type: event.eventType, deliver_at: isoTime(event.dueMs), due_in_ms: event.dueMs - now, bytes: event.bytes };
}

export function summariesHtml(base: string, summaries: readonly ScheduleSummary[], now: number): string {
  const rows = summaries.map((s) => [
    link(base, { stream: s.stream }, s.stream),
    s.problem === undefined ? esc(s.total) : '—',
    s.problem !== undefined ? `<span class="warn">cannot hold scheduled events: ${esc(s.problem)}</span>` : s.nextDueMs === undefined ? '—' : dueHtml(s.nextDueMs, now),
  ]);
  return `<h2>Streams</h2>${table(['stream', 'scheduled', 'next due'], rows, 'the deployment declares no streams')}`;
}

export interface EventsView {
  readonly base: string;
  readonly stream: string;
  readonly page: ScheduledPage;
  readonly offset: number;
  /** The size parameter to keep in paging links; undefined for the default. */
  readonly size: string | undefined;
  readonly now: number;
}

export function eventsHtml({ base, stream, page, offset, size, now }: EventsView): string {
  const rows = page.events.map((e) => [
    `<code>${esc(e.eventId)}</code>`,
    e.eventType === '' ? '<span class="muted">unreadable</span>' : esc(e.eventType),
    dueHtml(e.dueMs, now),
    e.bytes < 0 ? '<span class="muted">unreadable</span>' : `${esc(e.bytes)} B`,
    link(`${base}/cancel`, { stream, event_id: e.eventId }, 'cancel…'),
  ]);
  const shown = page.events.length === 0 ? '' : ` Showing ${esc(offset + 1)}–${esc(offset + page.events.length)} of ${esc(page.total)}.`;
  const later = page.nextOffset === undefined ? '' : link(base, { stream, offset: String(page.nextOffset), size }, 'later →');
  const earlier = offset === 0 ? '' : link(base, { stream, offset: undefined, size }, '← earliest');
  const paging = [earlier, later].filter((l) => l !== '').join(' · ');
  return (
    `<h2>Scheduled on <code>${esc(stream)}</code></h2><p>Earliest due first (due times by the Redis clock).${shown}</p>` +
    table(['event id', 'event type', 'due', 'size', ''], rows, offset === 0 ? 'nothing scheduled' : 'no events at this offset') +
    (paging === '' ? '' : `<p>${paging}</p>`)
  );
}

const EFFECT =
  'It is removed from the schedule before it is appended, so no consumer ever sees it; its publish-dedupe record becomes ' +
  '<code>cancelled</code>, so a retried publish of the same event_id inside the dedupe window stays a duplicate instead of scheduling it again. ' +
  'The same script as <code>saga-streams schedule cancel</code>: a cancel and the move never both win.';

export function confirmHtml(base: string, stream: string, eventId: string, dueMs: number | undefined, now: number): string {
  const what = `event <code>${esc(eventId)}</code> on <code>${esc(stream)}</code>`;
  const back = `<p>${link(base, { stream }, 'back to the schedule')}</p>`;
  if (dueMs === undefined) {
    return `<section class="schedule-cancel"><h2>Cancel ${what}?</h2><p>It is not scheduled (moved into its stream already, cancelled already, or never scheduled): there is nothing to cancel.</p>${back}</section>`;
  }
  const hidden = `<input type="hidden" name="stream" value="${esc(stream)}"><input type="hidden" name="event_id" value="${esc(eventId)}">`;
  return (
    `<section class="schedule-cancel"><h2>Cancel ${what}?</h2><p>Due ${dueHtml(dueMs, now)}.</p><p>${EFFECT}</p>` +
    `<form method="post" action="${esc(`${base}/cancel`)}">${hidden}<button type="submit">Cancel this event</button></form>${back}</section>`
  );
}

export function outcomeJson(stream: string, outcome: CancelOutcome) {
  return { stream, event_id: outcome.eventId, status: outcome.status, deliver_at: outcome.status === 'cancelled' ? isoTime(outcome.dueMs) : null };
}

export function outcomeHtml(base: string, stream: string, outcome: CancelOutcome, now: number): string {
  const what = `<code>${esc(outcome.eventId)}</code> on <code>${esc(stream)}</code>`;
  const text =
    outcome.status === 'cancelled'
      ? `<p><strong>cancelled</strong>: ${what} was due ${dueHtml(outcome.dueMs, now)} and will not be appended.</p>`
      : `<p><strong>not scheduled</strong>: ${what} was not in the schedule (moved into its stream already, cancelled already, or never scheduled); nothing changed.</p>`;
  return `<section class="schedule-cancel-result">${text}<p>${link(base, { stream }, 'back to the schedule')}</p></section>`;
}
