/**
 * What the data sections share to render: HTML escaping (every value from Redis goes through
 * `esc` or `valueHtml`, never into markup raw), the JSON-or-HTML choice, and URLs built from
 * where the shell mounted the section — a section never assumes its own mount path.
 */
import type { Context } from 'hono';
import type { ShownValue } from '../queries/field-value';
import { isoTime } from '../html';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** `Accept: application/json` or `?format=json`: the same data as the page, as JSON. */
export function wantsJson(c: Context): boolean {
  return c.req.query('format') === 'json' || (c.req.header('accept') ?? '').includes('application/json');
}

/**
 * The section's mount path, from the raw (still percent-encoded) request path minus the
 * part the section's own route matched (`local`, e.g. `/record`; '' for its index).
 */
export function sectionBase(c: Context, local: string): string {
  const path = new URL(c.req.url).pathname.replace(/\/+$/, '');
  return (local !== '' && path.endsWith(local) ? path.slice(0, -local.length) : path).replace(/\/+$/, '');
}

/** Another section's path beside this one (sections are mounted side by side under /ops). */
export function siblingSection(base: string, name: 'dlt' | 'find' | 'saga'): string {
  return `${base.slice(0, base.lastIndexOf('/'))}/${name}`;
}

export function href(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return esc(text === '' ? path : `${path}?${text}`);
}

export function link(path: string, params: Record<string, string | undefined>, label: string): string {
  return `<a href="${href(path, params)}">${esc(label)}</a>`;
}

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, empty = 'none'): string {
  if (rows.length === 0) return `<p class="muted">${esc(empty)}</p>`;
  const head = headers.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A field value: escaped text, or hex marked as such, with what the size cap left out. */
export function valueHtml(value: ShownValue): string {
  const more = value.omittedBytes > 0 ? `<span class="omitted">… ${value.omittedBytes} more bytes</span>` : '';
  const shown = value.encoding === 'hex' ? `<span class="hex" title="not UTF-8: shown as hex">hex ${esc(value.shown)}</span>` : esc(value.shown);
  return `<pre class="value">${shown}${more}</pre>`;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

export function timeHtml(ms: number, now: number): string {
  const iso = ms > 0 ? isoTime(ms) : '?';
  return `<time datetime="${esc(iso)}">${esc(iso)}</time> (${esc(formatAge(now - ms))} ago)`;
}

/** A 400 answer in the form the client asked for. */
export function badRequest(c: Context, page: (title: string, body: string) => string, message: string): Response {
  if (wantsJson(c)) return c.json({ error: message }, 400);
  return c.html(page('Bad request', `<p class="error">${esc(message)}</p>`), 400);
}

export function notFound(c: Context, page: (title: string, body: string) => string, message: string): Response {
  if (wantsJson(c)) return c.json({ error: message }, 404);
  return c.html(page('Not found', `<p class="error">${esc(message)}</p>`), 404);
}
