/**
 * The dashboard's HTML: escaping and the page frame. Plain template strings (no JSX, no
 * template library): every byte here ships in the Worker. Every value from Redis or a request
 * passes through `escapeHtml` before it reaches a page; pages carry no script at all, which the
 * Content-Security-Policy (app.ts) enforces.
 */

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface NavLink {
  readonly href: string;
  readonly label: string;
}

export interface FrameOptions {
  readonly deployment: string;
  readonly base: string;
  readonly nav: readonly NavLink[];
  /** Seconds between reloads (the overview's live numbers); none when absent. */
  readonly refresh?: number;
  /** Hide the nav and the log-out button (the login page). */
  readonly bare?: boolean;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{display:flex;gap:1.2em;align-items:center;padding:.6em 1.5em;background:#1d2430;color:#fff}
header a{color:#cfe0ff;text-decoration:none}header a:hover{text-decoration:underline}header form{margin-left:auto}
main{padding:1em 1.5em}h1{font-size:1.1em;margin:0}h2{font-size:1.05em;margin:1.4em 0 .5em}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #d5d9e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.card{display:inline-block;background:#fff;border:1px solid #d5d9e0;margin:0 1em 1em 0;padding:.5em .8em;vertical-align:top}
.warn{color:#a15c00}.error{color:#b3261e}.muted{color:#6b7483}pre{white-space:pre-wrap;background:#fff;border:1px solid #d5d9e0;padding:.5em}
svg text{font:11px system-ui,sans-serif;fill:#6b7483}button{cursor:pointer}`;

export function frame(title: string, body: string, options: FrameOptions): string {
  const nav = options.bare
    ? ''
    : options.nav.map((link) => `<a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a>`).join('') +
      `<form method="post" action="${escapeHtml(options.base)}/logout"><button type="submit">Log out</button></form>`;
  const refresh = options.refresh ? `<meta http-equiv="refresh" content="${options.refresh}">` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">${refresh}
<title>${escapeHtml(title)} · ${escapeHtml(options.deployment)}</title><style>${STYLE}</style></head>
<body><header><h1>saga-streams · ${escapeHtml(options.deployment)}</h1>${nav}</header><main><h2>${escapeHtml(title)}</h2>${body}</main></body></html>`;
}

/** A table of escaped cells; a cell given as `{ html }` is inserted as is (already escaped). */
export type Cell = string | number | boolean | undefined | null | { readonly html: string; readonly numeric?: boolean };

export function table(headers: readonly string[], rows: ReadonlyArray<readonly Cell[]>, empty = 'nothing yet'): string {
  if (rows.length === 0) return `<p class="muted">${escapeHtml(empty)}</p>`;
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const cell = (value: Cell) => {
    if (typeof value === 'number') return `<td class="n">${value}</td>`;
    if (value !== null && typeof value === 'object') return `<td${value.numeric ? ' class="n"' : ''}>${value.html}</td>`;
    return `<td>${escapeHtml(value)}</td>`;
  };
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows.map((row) => `<tr>${row.map(cell).join('')}</tr>`).join('')}</tbody></table>`;
}

/**
 * An epoch-ms time as ISO 8601, or '?' when it is not one a Date can hold: history records
 * and samples come from Redis, and one absurd value must not turn a whole page into a 500
 * (toISOString throws a RangeError beyond ±8.64e15 ms).
 */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? '?' : date.toISOString();
}

/** Milliseconds as a short human duration: 850 ms, 12.3 s, 4.5 min, 2.1 h, 3.0 d. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const units: Array<[number, string]> = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']];
  const [size, unit] = units.find(([size]) => ms >= size)!;
  return `${(ms / size).toFixed(1)} ${unit}`;
}
