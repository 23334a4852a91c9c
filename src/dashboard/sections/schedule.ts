/**
 * The Scheduled section (SPEC §5.6, issue 26), mounted at /ops/schedule: per declared stream
 * (any of them may be published to with a due time) how many events wait and when the first
 * is due; one stream's events earliest due first, paged; and cancel by event_id with a
 * confirmation step — GET /cancel shows what will happen, POST /cancel does it (the shell
 * checks the admin token and CSRF before any of this runs). Same semantics as
 * `saga-streams schedule list|cancel`, the dedupe prefix included.
 */
import { Hono, type Context } from 'hono';
import { isValidEventId } from '../../entry/keys';
import { cancelScheduled } from '../../schedule/cancel';
import { scheduleSlotProblem } from '../../schedule/keys';
import { DEFAULT_LIST_LIMIT, listScheduled } from '../../schedule/list';
import type { DashboardContext, DashboardSection } from '../contract';
import { isoTime } from '../html';
import { scheduledDueOf, summarizeSchedules } from '../queries/scheduled';
import { declaredStreams, type DeclaredStream } from '../queries/streams';
import { badRequest, esc, notFound, sectionBase, wantsJson } from './markup';
import { confirmHtml, eventJson, eventsHtml, outcomeHtml, outcomeJson, summariesHtml, summaryJson } from './schedule-view';

/** Largest page the section renders (listScheduled takes more; a page of HTML should not). */
export const MAX_SCHEDULE_PAGE = 1_000;
const EVENT_ID_RULE = 'event_id must be 1..=256 printable ASCII characters without spaces';

type Streams = readonly DeclaredStream[];

/** A query integer: digits only (no `1e3`, `0x10`, ` 5`), within bounds; undefined when absent. */
function integerOf(text: string | undefined, min: number, max: number): number | undefined | 'bad' {
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text)) return 'bad';
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : 'bad';
}

async function index(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const base = sectionBase(c, '');
  const port = ctx.runtime.port;
  const offset = integerOf(c.req.query('offset'), 0, Number.MAX_SAFE_INTEGER);
  const size = integerOf(c.req.query('size'), 1, MAX_SCHEDULE_PAGE);
  if (offset === 'bad') return badRequest(c, ctx.page, 'offset must be an integer >= 0');
  if (size === 'bad') return badRequest(c, ctx.page, `size must be an integer in 1..=${MAX_SCHEDULE_PAGE}`);

  const summaries = await summarizeSchedules(port, streams.map((s) => s.stream));
  const chosenName = c.req.query('stream') ?? summaries.find((s) => s.total > 0)?.stream ?? streams[0]?.stream;
  const chosen = summaries.find((s) => s.stream === chosenName);
  if (chosenName !== undefined && chosen === undefined) return notFound(c, ctx.page, `no declared stream named ${JSON.stringify(chosenName)}`);
  // An unschedulable stream is listed with its reason; there is no page of it to read.
  const page = chosen === undefined || chosen.problem !== undefined ? undefined : await listScheduled(port, chosen.stream, { offset: offset ?? 0, limit: size ?? DEFAULT_LIST_LIMIT });
  const now = ctx.now();

  if (wantsJson(c)) {
    return c.json({
      streams: summaries.map(summaryJson),
      stream: chosen?.stream ?? null,
      offset: offset ?? 0,
      total: page?.total ?? 0,
      events: page?.events.map((e) => eventJson(e, now)) ?? [],
      next_offset: page?.nextOffset ?? null,
    });
  }
  const events =
    chosen === undefined
      ? ''
      : page === undefined
        ? `<h2>Scheduled on <code>${esc(chosen.stream)}</code></h2><p class="warn">This stream cannot hold scheduled events here (see above).</p>`
        : eventsHtml({ base, stream: chosen.stream, page, offset: offset ?? 0, size: size === undefined ? undefined : String(size), now });
  return c.html(ctx.page('Scheduled', `<section class="schedule">${summariesHtml(base, summaries, now)}${events}</section>`));
}

type TargetInput = { stream?: unknown; event_id?: unknown };

/** The stream and event a cancel names, or why not (the message names the field). */
function targetOf(input: TargetInput, streams: Streams, cluster: boolean): { stream: DeclaredStream; eventId: string } | string {
  const stream = streams.find((s) => s.stream === input.stream);
  if (stream === undefined) return 'stream must name a stream the deployment declares';
  const problem = scheduleSlotProblem(stream.stream, cluster);
  if (problem !== undefined) return `stream cannot hold scheduled events: ${problem}`;
  if (typeof input.event_id !== 'string' || !isValidEventId(input.event_id)) return EVENT_ID_RULE;
  return { stream, eventId: input.event_id };
}

async function confirm(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const target = targetOf({ stream: c.req.query('stream'), event_id: c.req.query('event_id') }, streams, ctx.runtime.port.cluster);
  if (typeof target === 'string') return badRequest(c, ctx.page, target);
  const { stream, eventId } = target;
  const dueMs = await scheduledDueOf(ctx.runtime.port, stream.stream, eventId);
  const now = ctx.now();
  if (wantsJson(c)) {
    const due = dueMs === undefined ? { deliver_at: null, due_in_ms: null } : { deliver_at: isoTime(dueMs), due_in_ms: dueMs - now };
    return c.json({ stream: stream.stream, event_id: eventId, scheduled: dueMs !== undefined, ...due });
  }
  return c.html(ctx.page('Cancel a scheduled event', confirmHtml(sectionBase(c, '/cancel'), stream.stream, eventId, dueMs, now)));
}

async function cancel(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const type = c.req.header('content-type') ?? '';
  const input = (type.includes('application/json') ? await c.req.json().catch(() => ({})) : await c.req.parseBody()) as TargetInput | null;
  const target = targetOf(input ?? {}, streams, ctx.runtime.port.cluster);
  if (typeof target === 'string') return badRequest(c, ctx.page, target);
  const { stream, eventId } = target;
  // The publishers' prefix, as the CLI passes it: their record of the event becomes `cancelled@<due>`.
  const outcome = await cancelScheduled(ctx.runtime.port, stream.stream, eventId, { dedupePrefix: stream.keys.publishDedupePrefix });
  if (wantsJson(c)) return c.json(outcomeJson(stream.stream, outcome));
  return c.html(ctx.page('Cancel a scheduled event', outcomeHtml(sectionBase(c, '/cancel'), stream.stream, outcome, ctx.now())));
}

export const scheduleSection: DashboardSection = (ctx) => {
  const streams = declaredStreams(ctx.runtime.config);
  return new Hono()
    .get('/', (c) => index(c, ctx, streams))
    .get('/cancel', (c) => confirm(c, ctx, streams))
    .post('/cancel', (c) => cancel(c, ctx, streams));
};
