/**
 * The saga view (issue 17 §1), mounted at /ops/saga: `/<instance id>` (or `?instance=`) →
 * the instance's commands and results in append order across the deployment's streams,
 * each with its state per consumer group and its dead-letter reason (saga-trail.ts). The
 * scan is bounded and the page says how far it went.
 */
import { Hono, type Context } from 'hono';
import { entryIdMillis } from '../../entry/entry';
import type { DashboardContext, DashboardSection } from '../contract';
import { sagaTrail, type SagaStep, type SagaTrail } from '../queries/saga-trail';
import { MAX_SCAN_LIMIT } from '../queries/recent-entries';
import { deadLetterJson } from './dead-letter-view';
import { groupJson, groupStatesHtml, searchedHtml, searchedJson } from './entry-view';
import { scanLimitOf } from './find';
import { badRequest, esc, link, sectionBase, siblingSection, table, wantsJson } from './markup';
import { isoTime } from '../html';

const MAX_INSTANCE_LENGTH = 256;

function stepJson(step: SagaStep) {
  return {
    stream: step.stream,
    entry_id: step.entryId,
    in_stream: step.inStream,
    kind: step.kind,
    event: step.event ?? null,
    event_id: step.eventId ?? null,
    step: step.step ?? null,
    action: step.action ?? null,
    outcome: step.outcome ?? null,
    error_code: step.errorCode ?? null,
    at: step.at ?? null,
    groups: step.groups.map(groupJson),
    dead_letters: step.deadLetters.map((r) => deadLetterJson(r, step.dlt)),
  };
}

function what(step: SagaStep): string {
  const parts = [step.kind, step.step, step.action, step.outcome, step.errorCode].filter((p): p is string => p !== undefined);
  return esc(parts.join(' · '));
}

function trailHtml(base: string, trail: SagaTrail): string {
  const dltBase = siblingSection(base, 'dlt');
  const findBase = siblingSection(base, 'find');
  const rows = trail.steps.map((s, i) => [
    esc(i + 1),
    esc(s.at ?? isoTime(entryIdMillis(s.entryId) ?? 0)),
    what(s),
    `<code>${esc(s.event ?? '')}</code>`,
    s.eventId === undefined ? '' : link(findBase, { id: s.eventId }, s.eventId),
    `<code>${esc(s.stream)}</code> ${link(findBase, { id: s.entryId }, s.entryId)}${s.inStream ? '' : ' <span class="warn">(trimmed; from its DLT record)</span>'}`,
    groupStatesHtml(s.groups, dltBase, s.stream),
  ]);
  const wider = trail.scanLimit < MAX_SCAN_LIMIT ? ` ${link(base, { instance: trail.instanceId, scan: String(Math.min(MAX_SCAN_LIMIT, trail.scanLimit * 10)) }, 'search wider')}` : '';
  return (
    `<h2>Saga instance <code>${esc(trail.instanceId)}</code></h2>` +
    table(['#', 'time', 'what', 'event', 'event id', 'entry', 'state per group'], rows, 'No entry of this instance within the searched range.') +
    `<p class="muted">Nothing indexes entries by saga instance: these are the instance's entries among what was searched; older ones are not shown.${wider}</p>` +
    searchedHtml(trail.searched)
  );
}

async function view(c: Context, ctx: DashboardContext, instance: string, local: string): Promise<Response> {
  const base = sectionBase(c, local);
  const scanLimit = scanLimitOf(c.req.query('scan'));
  if (scanLimit === undefined) return badRequest(c, ctx.page, `scan must be an integer in 1..=${MAX_SCAN_LIMIT}`);
  if (instance.length > MAX_INSTANCE_LENGTH) return badRequest(c, ctx.page, `instance id must be at most ${MAX_INSTANCE_LENGTH} characters`);
  const form = `<form method="get" action="${esc(base)}"><label>Saga instance id <input name="instance" value="${esc(instance)}" size="50" required maxlength="${MAX_INSTANCE_LENGTH}"></label> <button type="submit">Show</button></form>`;
  if (instance === '') {
    if (wantsJson(c)) return badRequest(c, ctx.page, 'instance is required');
    return c.html(ctx.page('Saga view', `<section class="saga">${form}</section>`));
  }
  const trail = await sagaTrail(ctx.runtime.port, ctx.runtime.config, instance, { scanLimit });
  if (wantsJson(c)) return c.json({ instance_id: trail.instanceId, scan_limit: trail.scanLimit, searched: trail.searched.map(searchedJson), steps: trail.steps.map(stepJson) });
  return c.html(ctx.page('Saga view', `<section class="saga">${form}${trailHtml(base, trail)}</section>`));
}

export const sagaSection: DashboardSection = (ctx) =>
  new Hono()
    .get('/', (c) => view(c, ctx, (c.req.query('instance') ?? '').trim(), ''))
    .get('/:instance', (c) => {
      // The raw last path segment: sectionBase strips it as written in the URL.
      const raw = new URL(c.req.url).pathname.replace(/\/+$/, '');
      return view(c, ctx, c.req.param('instance'), raw.slice(raw.lastIndexOf('/')));
    });
