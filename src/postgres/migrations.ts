/**
 * The schema of saga-streams/postgres, as ordered migrations of plain SQL. They live in this
 * module (not .sql files read at run time) so Lambda and Worker bundles carry them; table
 * names come from `Tables` (validated, quoted identifiers). `saga-streams db migrate` applies
 * them; `--print` shows the SQL for a migration tool of your own. Never edit a released
 * migration: add the next one.
 */
import type { Tables } from './tables';

export interface Migration {
  /** Stable id, recorded in the migrations table once applied. */
  readonly id: string;
  /** Statements, run in order inside the migrating transaction. */
  statements(tables: Tables): string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: '0001_inbox_outbox',
    statements: (t) => [
      // Inbox: one row per (consumer, event) handled; its primary key is what turns a
      // redelivery into a duplicate. recorded_at drives retention.
      `CREATE TABLE IF NOT EXISTS ${t.inbox} (
  consumer text NOT NULL,
  event_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
)`,
      `CREATE INDEX IF NOT EXISTS ${t.objectName('inbox', 'recorded_at')} ON ${t.inbox} (recorded_at)`,
      // Outbox: events decided in a transaction, published by the relay after commit. id
      // orders publication; ordering_key (e.g. a saga instance id) keeps one key's events in
      // id order. event_id is unique: enqueueing the same event twice keeps the first.
      `CREATE TABLE IF NOT EXISTS ${t.outbox} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  producer text NOT NULL,
  event_type text NOT NULL,
  event_id text NOT NULL UNIQUE,
  payload bytea NOT NULL,
  traceparent text,
  ordering_key text,
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  refused_at timestamptz,
  refusal text
)`,
      `CREATE INDEX IF NOT EXISTS ${t.objectName('outbox', 'pending')} ON ${t.outbox} (id) WHERE sent_at IS NULL AND refused_at IS NULL`,
      `CREATE INDEX IF NOT EXISTS ${t.objectName('outbox', 'unsent_by_key')} ON ${t.outbox} (ordering_key, id) WHERE sent_at IS NULL`,
      `CREATE INDEX IF NOT EXISTS ${t.objectName('outbox', 'sent_at')} ON ${t.outbox} (sent_at) WHERE sent_at IS NOT NULL`,
    ],
  },
  {
    id: '0002_outbox_keys',
    statements: (t) => [
      // One row per ordering key, there to be locked: an enqueue of key K locks K's row
      // before it takes its outbox id, so overlapping enqueuers of K take their ids one
      // transaction after the other and id order is K's enqueue order (outbox.ts). Rows
      // already in the outbox need no key row; retention deletes key rows of keys whose
      // rows are all gone (retention.ts).
      `CREATE TABLE IF NOT EXISTS ${t.outboxKeys} (ordering_key text PRIMARY KEY)`,
    ],
  },
  {
    id: '0003_outbox_schedule',
    statements: (t) => [
      // A row due later (SPEC §5.6): the relay hands it to the stream's schedule with this
      // instant as `deliverAt` instead of appending it. NULL: publish now, as before.
      `ALTER TABLE ${t.outbox} ADD COLUMN IF NOT EXISTS deliver_at timestamptz`,
      // A cancel row: the relay cancels the scheduled event with this event_id (on the stream
      // its event_type routes to) instead of publishing anything. Its own event_id is
      // `cancel <that id>`, which no publishable id can be (they hold no space). NULL: a
      // publish row. Both columns are nullable without a default: adding them rewrites nothing.
      `ALTER TABLE ${t.outbox} ADD COLUMN IF NOT EXISTS cancels text`,
    ],
  },
];

/** What `db migrate --print` shows: every migration's SQL, in order. */
export function migrationScript(tables: Tables): string {
  const header = [`CREATE SCHEMA IF NOT EXISTS ${tables.schema};`, `CREATE TABLE IF NOT EXISTS ${tables.migrations} (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());`];
  const body = MIGRATIONS.flatMap((m) => [`-- ${m.id}`, ...m.statements(tables).map((s) => `${s};`), `INSERT INTO ${tables.migrations} (id) VALUES ('${m.id}') ON CONFLICT DO NOTHING;`]);
  return [...header, ...body].join('\n') + '\n';
}
