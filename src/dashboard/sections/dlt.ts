/**
 * The DLT browser (issue 17 §1), mounted at /ops/dlt: per consumed stream, the reasons with
 * their counts, records newest first with their ids and original fields, one record in full,
 * and redrive — of one record or of every record of a reason — with a confirmation step:
 * GET /redrive shows what will happen, POST /redrive does it (the shell checks the admin
 * token and CSRF before any of this runs).
 */
import { Hono, type Context } from 'hono';
import type { DashboardContext, DashboardSection } from '../contract';
import { DEFAULT_PAGE_SIZE, isEntryId, MAX_PAGE_SIZE, newestDeadLetters, readDeadLetter, summarizeDeadLetters } from '../queries/dead-letters';
import { planRedrive, redriveTarget, type RedrivePlan, type RedriveResult, type RedriveTarget } from '../queries/redrive';
import { consumedStreams } from '../queries/streams';
import { deadLetterJson, originalHtml, RECORD_HEADERS, recordCells } from './dead-letter-view';
import { badRequest, esc, href, link, notFound, sectionBase, table, timeHtml, wantsJson } from './markup';

const REASON = /^[a-z0-9_]{1,64}$/;

type Streams = ReturnType<typeof consumedStreams>;

function pageSizeOf(text: string | undefined): number | undefined {
  if (text === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(text);
  return Number.isInteger(size) && size >= 1 && size <= MAX_PAGE_SIZE ? size : undefined;
}

async function index(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const base = sectionBase(c, '');
  const port = ctx.runtime.port;
  const reason = c.req.query('reason');
  const before = c.req.query('before');
  const size = pageSizeOf(c.req.query('size'));
  if (reason !== undefined && !REASON.test(reason)) return badRequest(c, ctx.page, 'reason must be a snake_case reason code');
  if (before !== undefined && !isEntryId(before)) return badRequest(c, ctx.page, 'before must be a DLT entry id (ms-seq)');
  if (size === undefined) return badRequest(c, ctx.page, `size must be an integer in 1..=${MAX_PAGE_SIZE}`);

  const summaries = await Promise.all(streams.map(async (s) => ({ stream: s.stream, ...(await summarizeDeadLetters(port, s.keys.dlt)) })));
  const chosenName = c.req.query('stream') ?? summaries.find((s) => s.length > 0)?.stream ?? streams[0]?.stream;
  const chosen = streams.find((s) => s.stream === chosenName);
  if (chosenName !== undefined && chosen === undefined) return notFound(c, ctx.page, `no consumed stream named ${JSON.stringify(chosenName)}`);
  const page = chosen === undefined ? undefined : await newestDeadLetters(port, chosen.keys.dlt, { reason, before, pageSize: size });
  const now = ctx.now();

  if (wantsJson(c)) {
    return c.json({
      streams: summaries,
      stream: chosen?.stream ?? null,
      reason: reason ?? null,
      records: page?.records.map((r) => deadLetterJson(r, chosen!.keys.dlt)) ?? [],
      scanned: page?.scanned ?? 0,
      next: page?.next ?? null,
    });
  }
  const summaryHtml = summaries
    .map((s) => {
      const partial = s.counted < s.length ? ` (counts over the newest ${s.counted} of ${s.length} records)` : '';
      const rows = s.reasons.map((r) => [
        link(base, { stream: s.stream, reason: r.reason }, r.reason),
        esc(r.count),
        link(`${base}/redrive`, { stream: s.stream, reason: r.reason }, 'redrive all…'),
      ]);
      return `<h3>${link(base, { stream: s.stream }, s.stream)} — ${esc(s.length)} dead letter(s) in <code>${esc(s.dlt)}</code>${esc(partial)}</h3>${table(['reason', 'count', ''], rows, 'no dead letters')}`;
    })
    .join('\n');
  const records =
    chosen === undefined || page === undefined
      ? '<p class="muted">No consumer reads any stream: there is no dead-letter stream to browse.</p>'
      : recordsHtml(base, chosen.stream, chosen.keys.dlt, reason, page, size, now);
  return c.html(ctx.page('Dead letters', `<section class="dlt"><h2>Reasons</h2>${summaryHtml}${records}</section>`));
}

function recordsHtml(
  base: string,
  stream: string,
  dlt: string,
  reason: string | undefined,
  page: Awaited<ReturnType<typeof newestDeadLetters>>,
  size: number,
  now: number,
): string {
  const rows = page.records.map((r) => [
    link(`${base}/record`, { stream, id: r.id }, r.id),
    ...recordCells(r, now),
    `<details><summary>${esc(r.originalFields.length)} field(s)</summary>${originalHtml(r)}</details>`,
    link(`${base}/redrive`, { stream, id: r.id }, 'redrive…'),
  ]);
  const sizeParam = size === DEFAULT_PAGE_SIZE ? undefined : String(size);
  const older = page.next === undefined ? '' : `<p>${link(base, { stream, reason, before: page.next, size: sizeParam }, 'older →')}</p>`;
  const filter = reason === undefined ? '' : ` with reason <code>${esc(reason)}</code> (${link(base, { stream }, 'all reasons')})`;
  return (
    `<h2>Records of <code>${esc(stream)}</code>${filter}</h2><p>Newest first, from <code>${esc(dlt)}</code>.</p>` +
    table(['DLT id', ...RECORD_HEADERS, 'original', ''], rows, 'no records') +
    older
  );
}

async function record(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const base = sectionBase(c, '/record');
  const source = streams.find((s) => s.stream === c.req.query('stream'));
  const id = c.req.query('id') ?? '';
  if (source === undefined) return notFound(c, ctx.page, 'no consumed stream of that name');
  if (!isEntryId(id)) return badRequest(c, ctx.page, 'id must be a DLT entry id (ms-seq)');
  const found = await readDeadLetter(ctx.runtime.port, source.keys.dlt, id);
  if (found === undefined) return notFound(c, ctx.page, `no record ${id} in ${source.keys.dlt} (redriven or trimmed?)`);
  if (wantsJson(c)) return c.json(deadLetterJson(found, source.keys.dlt));
  const rows = [['DLT id', `<code>${esc(found.id)}</code>`], ...RECORD_HEADERS.map((h, i) => [esc(h), recordCells(found, ctx.now())[i]!])];
  const body =
    `<section class="dlt-record"><h2>Dead letter <code>${esc(found.id)}</code> of <code>${esc(source.stream)}</code></h2>` +
    table(['', ''], rows) +
    `<h3>Original entry</h3>${originalHtml(found)}` +
    `<p>${link(`${base}/redrive`, { stream: source.stream, id: found.id }, 'redrive…')} · ${link(base, { stream: source.stream }, 'back to the list')}</p></section>`;
  return c.html(ctx.page(`Dead letter ${found.id}`, body));
}

type TargetInput = { stream?: unknown; id?: unknown; reason?: unknown };

function targetOf(input: TargetInput, streams: Streams): { source: Streams[number]; target: RedriveTarget } | string {
  const source = streams.find((s) => s.stream === input.stream);
  if (source === undefined) return 'stream must name a consumed stream';
  const id = typeof input.id === 'string' && input.id !== '' ? input.id : undefined;
  const reason = typeof input.reason === 'string' && input.reason !== '' ? input.reason : undefined;
  if ((id === undefined) === (reason === undefined)) return 'give either id (one record) or reason (every record of that reason)';
  if (id !== undefined) return isEntryId(id) ? { source, target: { kind: 'record', id } } : 'id must be a DLT entry id (ms-seq)';
  return REASON.test(reason!) ? { source, target: { kind: 'reason', reason: reason! } } : 'reason must be a snake_case reason code';
}

function describeTarget(plan: { stream: string; target: RedriveTarget }): string {
  return plan.target.kind === 'record'
    ? `record <code>${esc(plan.target.id)}</code> of <code>${esc(plan.stream)}</code>`
    : `every record with reason <code>${esc(plan.target.reason)}</code> of <code>${esc(plan.stream)}</code>`;
}

function planJson(plan: RedrivePlan, dlt: string) {
  return {
    stream: plan.stream,
    target: plan.target,
    more: plan.more,
    records: plan.records.map((p) => ({ ...deadLetterJson(p.record, dlt), planned: p.status, unrestorable: p.unrestorable ?? null })),
  };
}

function confirmHtml(base: string, plan: RedrivePlan, now: number): string {
  const will = plan.records.filter((p) => p.status === 'redrive').length;
  const rows = plan.records.map((p) => [
    `<code>${esc(p.record.id)}</code>`,
    ...recordCells(p.record, now),
    p.status === 'redrive' ? 'back to the stream' : `refused: ${esc(p.unrestorable ?? p.status)}`,
  ]);
  const target = plan.target;
  const hidden = `<input type="hidden" name="stream" value="${esc(plan.stream)}">${
    target.kind === 'record' ? `<input type="hidden" name="id" value="${esc(target.id)}">` : `<input type="hidden" name="reason" value="${esc(target.reason)}">`
  }`;
  const more = plan.more ? `<p class="warn">More records match than one redrive takes (${esc(plan.records.length)}); confirm again afterwards for the rest.</p>` : '';
  const form =
    will === 0
      ? '<p>Nothing here can be redriven.</p>'
      : `<form method="post" action="${esc(`${base}/redrive`)}">${hidden}<button type="submit">Redrive ${esc(will)} record(s)</button></form>`;
  return (
    `<section class="redrive"><h2>Redrive ${describeTarget(plan)}?</h2>` +
    `<p>Each record is appended back to <code>${esc(plan.stream)}</code> byte for byte (signature included), its marker cleared and the record deleted, ` +
    `by the same script as <code>saga-streams dlt redrive</code>. ${esc(will)} of ${esc(plan.records.length)} record(s) will be redriven.</p>` +
    more +
    table(['DLT id', ...RECORD_HEADERS, 'will be'], rows, 'no such record (already redriven or trimmed?)') +
    form +
    `<p>${link(base, { stream: plan.stream }, 'cancel')}</p></section>`
  );
}

async function confirm(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const chosen = targetOf({ stream: c.req.query('stream'), id: c.req.query('id'), reason: c.req.query('reason') }, streams);
  if (typeof chosen === 'string') return badRequest(c, ctx.page, chosen);
  const plan = await planRedrive(ctx.runtime.port, chosen.source.consumer, chosen.target);
  if (wantsJson(c)) return c.json(planJson(plan, chosen.source.keys.dlt));
  return c.html(ctx.page('Confirm redrive', confirmHtml(sectionBase(c, '/redrive'), plan, ctx.now())));
}

function resultJson(result: RedriveResult) {
  return {
    stream: result.stream,
    target: result.target,
    more: result.more,
    outcomes: result.outcomes.map((o) => ({ id: o.id, status: o.status, entry_id: o.entryId ?? null, reason: o.reason ?? null })),
  };
}

const OUTCOME_TEXT: Record<string, string> = {
  redriven: 'redriven',
  missing: 'already gone (redriven or trimmed)',
  foreign: 'refused: the record names another source stream',
  no_original: 'refused: no original fields to restore',
};

function resultHtml(base: string, result: RedriveResult): string {
  const redriven = result.outcomes.filter((o) => o.status === 'redriven').length;
  const rows = result.outcomes.map((o) => [
    `<code>${esc(o.id)}</code>`,
    esc(o.status === 'unrestorable' ? `unrestorable: ${o.reason}` : OUTCOME_TEXT[o.status]),
    o.entryId === undefined ? '' : `<code>${esc(o.entryId)}</code>`,
  ]);
  const more =
    result.more && result.target.kind === 'reason'
      ? `<p class="warn">More records of this reason may remain: ${link(`${base}/redrive`, { stream: result.stream, reason: result.target.reason }, 'redrive the rest…')}</p>`
      : '';
  return (
    `<section class="redrive-result"><h2>Redrive of ${describeTarget(result)}</h2><p>${esc(redriven)} of ${esc(result.outcomes.length)} record(s) redriven.</p>` +
    table(['DLT id', 'outcome', 'new entry id'], rows, 'no records matched') +
    more +
    `<p>${link(base, { stream: result.stream }, 'back to the dead letters')}</p></section>`
  );
}

async function redrive(c: Context, ctx: DashboardContext, streams: Streams): Promise<Response> {
  const type = c.req.header('content-type') ?? '';
  const input = (type.includes('application/json') ? await c.req.json().catch(() => ({})) : await c.req.parseBody()) as TargetInput;
  const chosen = targetOf(input ?? {}, streams);
  if (typeof chosen === 'string') return badRequest(c, ctx.page, chosen);
  const result = await redriveTarget(ctx.runtime.port, chosen.source.consumer, chosen.target);
  if (wantsJson(c)) return c.json(resultJson(result));
  return c.html(ctx.page('Redrive', resultHtml(sectionBase(c, '/redrive'), result)));
}

export const deadLetterSection: DashboardSection = (ctx) => {
  const streams = consumedStreams(ctx.runtime.config);
  return new Hono()
    .get('/', (c) => index(c, ctx, streams))
    .get('/record', (c) => record(c, ctx, streams))
    .get('/redrive', (c) => confirm(c, ctx, streams))
    .post('/redrive', (c) => redrive(c, ctx, streams));
};
