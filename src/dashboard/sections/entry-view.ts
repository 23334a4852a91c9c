/**
 * How the find and saga views show an entry's state per group, and an entry's fields — the
 * same words in both views and the same shapes in their JSON answers.
 */
import type { GroupState } from '../queries/entry-state';
import { showValue } from '../queries/field-value';
import type { ScanReport, SearchedStream } from '../queries/recent-entries';
import { esc, formatAge, link } from './markup';

/** One line per group, e.g. "billing: pending (consumer c1, idle 3m, 2 deliveries)". */
export function groupStatesHtml(states: readonly GroupState[], dltBase: string, stream: string): string {
  if (states.length === 0) return '<span class="muted">no consumer group</span>';
  const lines = states.map((s) => {
    const group = `<b>${esc(s.group)}</b>`;
    switch (s.state) {
      case 'pending':
        return `${group}: <span class="state pending">pending</span> (consumer ${esc(s.consumer)}, idle ${esc(formatAge(s.idleMs))}, ${esc(s.deliveries)} deliveries)`;
      case 'dead_lettered': {
        const reason = s.reason === undefined ? 'reason not among the scanned DLT records' : `reason ${esc(s.reason)}`;
        const record = s.dltId === undefined ? '' : ` — ${link(`${dltBase}/record`, { stream, id: s.dltId }, `record ${s.dltId}`)}`;
        return `${group}: <span class="state dead-lettered">dead-lettered</span> (${reason})${record}`;
      }
      case 'acked':
        return `${group}: <span class="state acked">acked</span>`;
      case 'not_delivered':
        return `${group}: <span class="state waiting">not delivered yet</span>`;
    }
  });
  return lines.join('<br>');
}

/** A group's state in the JSON answers (snake_case, like every other JSON field of the dashboard). */
export function groupJson(s: GroupState) {
  switch (s.state) {
    case 'pending':
      return { group: s.group, state: s.state, consumer: s.consumer, idle_ms: s.idleMs, deliveries: s.deliveries };
    case 'dead_lettered':
      return { group: s.group, state: s.state, reason: s.reason ?? null, dlt_id: s.dltId ?? null };
    default:
      return { group: s.group, state: s.state };
  }
}

export function fieldsJson(fields: ReadonlyMap<string, Uint8Array> | undefined) {
  if (fields === undefined) return null;
  return [...fields].map(([name, value]) => {
    const shown = showValue(value);
    return { name, encoding: shown.encoding, value: shown.shown, total_bytes: shown.totalBytes, omitted_bytes: shown.omittedBytes };
  });
}

/** What a bounded scan covered, in words: the whole key, or its newest N entries and why it stopped. */
export function scanWords(scanned: number, stoppedBy: ScanReport['stoppedBy'] | undefined, what: string): string {
  if (stoppedBy === undefined) return `${what}: read by id`;
  if (stoppedBy === 'end') return `all ${scanned} ${what}`;
  const bytes = stoppedBy === 'bytes' ? ' (stopped at the scan\'s byte budget: the entries are large)' : '';
  return `the newest ${scanned} ${what}${bytes}`;
}

/** One line per stream: how much of it and of its DLT a search covered. */
export function searchedHtml(searched: readonly SearchedStream[]): string {
  const items = searched.map(
    (s) => `<li><code>${esc(s.stream)}</code>: ${esc(scanWords(s.scanned, s.scanStoppedBy, 'entries'))}; ${esc(scanWords(s.dltScanned, s.dltScanStoppedBy, 'dead letters'))}</li>`,
  );
  return `<ul class="muted">${items.join('')}</ul>`;
}

export function searchedJson(s: SearchedStream & { readonly sagaEntries?: number }) {
  return {
    stream: s.stream,
    scanned: s.scanned,
    scan_stopped_by: s.scanStoppedBy ?? null,
    dlt_scanned: s.dltScanned,
    dlt_scan_stopped_by: s.dltScanStoppedBy,
    ...(s.sagaEntries === undefined ? {} : { saga_entries: s.sagaEntries }),
  };
}
