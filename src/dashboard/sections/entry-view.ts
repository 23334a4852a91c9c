/**
 * How the find and saga views show an entry's state per group, and an entry's fields — the
 * same words in both views and the same shapes in their JSON answers.
 */
import type { GroupState } from '../queries/entry-state';
import { showValue } from '../queries/field-value';
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

export function fieldsJson(fields: ReadonlyMap<string, Uint8Array> | undefined) {
  if (fields === undefined) return null;
  return [...fields].map(([name, value]) => {
    const shown = showValue(value);
    return { name, encoding: shown.encoding, value: shown.shown, total_bytes: shown.totalBytes, omitted_bytes: shown.omittedBytes };
  });
}
