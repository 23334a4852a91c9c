/**
 * Find by id (issue 17 §1), mounted at /ops/find: `?id=` an entry id, an event id or a saga
 * instance id → where it is now in each stream, per consumer group (locate.ts), its
 * dead-letter records, and a link to the saga view when the id names a saga instance.
 * `?scan=` widens the bounded scans (default 1,000 newest entries per stream and per DLT).
 */
import { Hono, type Context } from 'hono';
import type { DashboardContext, DashboardSection } from '../contract';
import { showValue } from '../queries/field-value';
import { locateId, type LocateResult } from '../queries/locate';
import { DEFAULT_SCAN_LIMIT, MAX_SCAN_LIMIT } from '../queries/recent-entries';
import { deadLetterJson } from './dead-letter-view';
import { fieldsJson, groupJson, searchedJson, groupStatesHtml, searchedHtml } from './entry-view';
import { badRequest, esc, link, sectionBase, siblingSection, table, timeHtml, valueHtml, wantsJson } from './markup';

const MAX_ID_LENGTH = 256;

const FOUND_BY: Record<string, string> = {
  entry_id: 'entry id',
  dedupe_record: 'publish-dedupe record',
  scan: 'scan of recent entries',
  dead_letter: 'dead-letter record',
};

export function scanLimitOf(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return DEFAULT_SCAN_LIMIT;
  const limit = Number(text);
  return Number.isInteger(limit) && limit >= 1 && limit <= MAX_SCAN_LIMIT ? limit : undefined;
}

function searchForm(action: string, id: string, label: string, name = 'id'): string {
  return `<form method="get" action="${esc(action)}"><label>${esc(label)} <input name="${esc(name)}" value="${esc(id)}" size="50" required maxlength="${MAX_ID_LENGTH}"></label> <button type="submit">Find</button></form>`;
}

function resultJson(result: LocateResult) {
  return {
    id: result.id,
    kind: result.kind,
    scan_limit: result.scanLimit,
    entries: result.entries.map((e) => ({
      stream: e.stream,
      entry_id: e.entryId,
      found_by: e.foundBy,
      in_stream: e.inStream,
      fields: fieldsJson(e.fields),
      groups: e.groups.map(groupJson),
    })),
    dead_letters: result.deadLetters.map((d) => deadLetterJson(d.record, d.dlt)),
    searched: result.searched.map(searchedJson),
  };
}

function resultHtml(base: string, result: LocateResult, now: number): string {
  const dltBase = siblingSection(base, 'dlt');
  const entryRows = result.entries.map((e) => {
    const fields = e.fields === undefined ? '' : [...e.fields].map(([name, value]) => `<code>${esc(name)}</code>${valueHtml(showValue(value))}`).join('');
    return [
      `<code>${esc(e.stream)}</code>`,
      `<code>${esc(e.entryId)}</code>${e.inStream ? '' : ' <span class="warn">(no longer in the stream: trimmed)</span>'}`,
      esc(FOUND_BY[e.foundBy]),
      groupStatesHtml(e.groups, dltBase, e.stream),
      fields === '' ? '' : `<details><summary>fields</summary>${fields}</details>`,
    ];
  });
  const dltRows = result.deadLetters.map((d) => [
    `<code>${esc(d.stream)}</code>`,
    link(`${dltBase}/record`, { stream: d.stream, id: d.record.id }, d.record.id),
    esc(d.record.reason),
    esc(d.record.group),
    `<code>${esc(d.record.sourceEntryId)}</code>`,
    `<code>${esc(d.record.eventId)}</code>`,
    timeHtml(d.record.deadLetteredAt, now),
  ]);
  const saga = result.searched.reduce((n, s) => n + s.sagaEntries, 0);
  const sagaHtml =
    saga === 0 ? '' : `<p>${esc(saga)} recent entr${saga === 1 ? 'y carries' : 'ies carry'} this id as saga <code>instance_id</code>: ${link(`${siblingSection(base, 'saga')}/${encodeURIComponent(result.id)}`, {}, 'saga view')}.</p>`;
  const how =
    result.kind === 'entry_id'
      ? 'Read as an entry id in every stream and dead-letter stream.'
      : "Read as an event id (through the publisher's dedupe record while its window lasts, else by a scan) and as a saga instance id.";
  const wider = result.scanLimit < MAX_SCAN_LIMIT ? ` ${link(base, { id: result.id, scan: String(Math.min(MAX_SCAN_LIMIT, result.scanLimit * 10)) }, 'search wider')}` : '';
  const scope = `<p class="muted">${esc(how)} Searched:${wider}</p>${searchedHtml(result.searched)}`;
  const gone =
    result.kind === 'entry_id'
      ? 'No stream or dead-letter stream holds this entry id: trimmed (after every group had settled it) or never appended.'
      : 'Not found within the searched range.';
  const nothing = result.entries.length === 0 && result.deadLetters.length === 0 && saga === 0 ? `<p class="muted">${esc(gone)}</p>` : '';
  return (
    `<h2>Where is <code>${esc(result.id)}</code>?</h2>${nothing}${sagaHtml}` +
    (result.entries.length > 0 ? `<h3>Entries</h3>${table(['stream', 'entry id', 'found by', 'state per group', ''], entryRows)}` : '') +
    (result.deadLetters.length > 0 ? `<h3>Dead-letter records</h3>${table(['stream', 'DLT id', 'reason', 'group', 'source entry', 'event id', 'dead-lettered'], dltRows)}` : '') +
    scope
  );
}

async function find(c: Context, ctx: DashboardContext): Promise<Response> {
  const base = sectionBase(c, '');
  const id = (c.req.query('id') ?? '').trim();
  const scanLimit = scanLimitOf(c.req.query('scan'));
  if (scanLimit === undefined) return badRequest(c, ctx.page, `scan must be an integer in 1..=${MAX_SCAN_LIMIT}`);
  if (id.length > MAX_ID_LENGTH) return badRequest(c, ctx.page, `id must be at most ${MAX_ID_LENGTH} characters`);
  const form = searchForm(base, id, 'Entry id, event id or saga instance id');
  if (id === '') {
    if (wantsJson(c)) return badRequest(c, ctx.page, 'id is required');
    return c.html(ctx.page('Find by id', `<section class="find">${form}</section>`));
  }
  const result = await locateId(ctx.runtime.port, ctx.runtime.config, id, { scanLimit });
  if (wantsJson(c)) return c.json(resultJson(result));
  return c.html(ctx.page('Find by id', `<section class="find">${form}${resultHtml(base, result, ctx.now())}</section>`));
}

export const findSection: DashboardSection = (ctx) => new Hono().get('/', (c) => find(c, ctx));
