/**
 * One dead-letter record as the dashboard shows it — the JSON answer and the HTML fragment
 * carry the same things: its ids (DLT entry, source entry, event), group, reason,
 * deliveries, time, and every original field capped and made safe by showValue.
 */
import { deadLetterSummaryJson, type DeadLetterRecord } from '../../redrive/record';
import { showValue, type ShownValue } from '../queries/field-value';
import { esc, table, timeHtml, valueHtml } from './markup';

export interface ShownField extends ShownValue {
  readonly name: string;
}

export function originalFields(record: DeadLetterRecord): ShownField[] {
  return record.originalFields.map(([name, value]) => ({ name, ...showValue(value) }));
}

export function deadLetterJson(record: DeadLetterRecord, dlt: string) {
  return {
    ...deadLetterSummaryJson(record, dlt),
    original_form: record.originalForm,
    unrestorable: record.unrestorable ?? null,
    original: originalFields(record).map((f) => ({
      name: f.name,
      encoding: f.encoding,
      value: f.shown,
      total_bytes: f.totalBytes,
      omitted_bytes: f.omittedBytes,
    })),
  };
}

/** The original entry's fields as a name/value table (packed originals already unpacked). */
export function originalHtml(record: DeadLetterRecord): string {
  const note =
    record.originalForm === 'packed'
      ? '<p class="muted">Recorded packed (<code>packed_original</code>): an entry too wide to copy field by field.</p>'
      : record.originalForm === 'none'
        ? '<p class="muted">The record holds no original fields.</p>'
        : '';
  const refused = record.unrestorable === undefined ? '' : `<p class="warn">Redrive refuses this record: ${esc(record.unrestorable)}.</p>`;
  const rows = originalFields(record).map((f) => [`<code>${esc(f.name)}</code>`, valueHtml(f)]);
  return `${note}${refused}${rows.length > 0 ? table(['field', 'value'], rows) : ''}`;
}

/** The record's own fields (ids, group, reason, deliveries, time) as table cells. */
export function recordCells(record: DeadLetterRecord, now: number): string[] {
  return [
    `<code>${esc(record.sourceEntryId)}</code>`,
    `<code>${esc(record.eventId)}</code>`,
    esc(record.group),
    esc(record.reason),
    esc(record.deliveries),
    timeHtml(record.deadLetteredAt, now),
  ];
}

export const RECORD_HEADERS = ['source entry', 'event id', 'group', 'reason', 'deliveries', 'dead-lettered'] as const;
