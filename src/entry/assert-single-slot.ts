/**
 * Under Redis Cluster every key a script touches must hash to the stream's slot: the
 * stream needs a hash tag, and its DLT, markers, cursor, dedupe records and deferral hash must carry it.
 * Checked where a port is known to be a Cluster (poller, readiness probe, redrive).
 */
import { ConfigError } from '../ground/errors';
import { hashTagOf } from './hash-tag';
import type { StreamKeys } from './keys';

export function assertSingleSlot(keys: StreamKeys): void {
  const tag = hashTagOf(keys.stream);
  if (tag === keys.stream) {
    throw new ConfigError('consumer config', [
      { path: 'stream', message: 'needs a hash tag on Redis Cluster (e.g. "orders:{o}") so its DLT, markers and cursor share its slot' },
    ]);
  }
  // The flow ready queue and per-key queues are named after flowLease (keys.ts), so they follow its slot.
  const fields = ['dlt', 'markerPrefix', 'cursor', 'publishDedupePrefix', 'defer', 'flowLease'] as const;
  const problems = fields
    .filter((field) => hashTagOf(keys[field]) !== tag)
    .map((field) => ({ path: `keys.${field}`, message: `must carry the stream's hash tag {${tag}} on Redis Cluster` }));
  if (problems.length > 0) throw new ConfigError('consumer config', problems);
}
