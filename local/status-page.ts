/**
 * The local stack's status page: `GET /` (HTML) and `GET /status.json` — backlog per
 * consumer, the latest run reports, and the demo's domain state. Read-only; no secrets.
 */
import { Hono } from 'hono';
import { consumerBacklog, type ConsumerBacklog } from '../src/probes/consumer-backlog';
import type { DeploymentRuntime } from '../src/deployment/runtime';

export interface StatusSources {
  readonly runtime: DeploymentRuntime;
  readonly recent: () => readonly Record<string, unknown>[];
  readonly demo?: () => Promise<Record<string, unknown>>;
}

export interface Status {
  readonly deployment: string;
  readonly consumers: readonly ConsumerBacklog[];
  readonly recent: readonly Record<string, unknown>[];
  readonly demo?: Record<string, unknown>;
}

export async function readStatus({ runtime, recent, demo }: StatusSources): Promise<Status> {
  const consumers = await Promise.all([...runtime.config.consumers.values()].map((plan) => consumerBacklog(runtime.port, plan)));
  return { deployment: runtime.config.name, consumers, recent: recent(), ...(demo ? { demo: await demo() } : {}) };
}

const escape = (value: unknown) =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function table(headers: readonly string[], rows: ReadonlyArray<readonly unknown[]>): string {
  const head = headers.map((h) => `<th>${escape(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

export function renderStatus(status: Status): string {
  const backlog = table(
    ['consumer', 'stream', 'group', 'pending', 'oldest pending', 'lag', 'dead letters', 'length'],
    status.consumers.map((c) =>
      c.status === 'ok'
        ? [c.consumer, c.stream, c.group, c.pending, c.oldestPendingAgeMs === undefined ? '' : `${c.oldestPendingAgeMs} ms`, c.lag ?? '?', c.deadLetters, c.streamLength]
        : [c.consumer, c.stream, c.group, 'no group yet', '', '', '', ''],
    ),
  );
  const runs = table(
    ['time', 'job', 'consumer', 'acked', 'dead-lettered', 'retained', 'ms', 'level'],
    [...status.recent].reverse().map((r) => [new Date(Number(r.timestamp)).toISOString(), r.job, r.consumer ?? '', r.acked ?? r.removed ?? '', r.deadLettered ?? '', r.retained ?? '', r.durationMs ?? '', r.level]),
  );
  const demo = status.demo ? `<h2>Example saga</h2><pre>${escape(JSON.stringify(status.demo, null, 2))}</pre>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>${escape(status.deployment)} — saga-streams</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}</style></head>
<body><h1>${escape(status.deployment)}</h1><p>JSON: <a href="/status.json">/status.json</a> · API: <a href="/healthz">/healthz</a> <a href="/readyz">/readyz</a></p>
<h2>Backlog</h2>${backlog}<h2>Recent runs</h2>${runs}${demo}</body></html>`;
}

export function statusApp(sources: StatusSources): Hono {
  const app = new Hono();
  app.get('/', async (c) => c.html(renderStatus(await readStatus(sources))));
  app.get('/status.json', async (c) => c.json(await readStatus(sources)));
  return app;
}
