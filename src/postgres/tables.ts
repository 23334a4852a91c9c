/**
 * Where the inbox, outbox and migrations tables live: a schema and three table names, each
 * a plain lowercase SQL identifier (validated, then always double-quoted), so the names can
 * be configured without any text from config ever reaching SQL unchecked. The outbox's keys
 * table (one row per ordering key, locked by each enqueue: outbox.ts) is named after the
 * outbox: `<outbox>_keys`.
 */
import * as z from 'zod/mini';
import { problemsOf } from '../ground/config-problems';
import { ConfigError } from '../ground/errors';
import { IN_ENGLISH } from '../ground/zod-messages';

const identifier = z.string().check(z.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase SQL identifier: a-z, 0-9, _ (not first), ≤ 63 chars'));

export const tablesSchema = z.strictObject({
  schema: z._default(identifier, 'public'),
  inbox: z._default(identifier, 'saga_inbox'),
  outbox: z._default(identifier, 'saga_outbox'),
  migrations: z._default(identifier, 'saga_migrations'),
});

export type TablesInput = z.input<typeof tablesSchema>;
export type TableNames = z.output<typeof tablesSchema>;

/** Quoted, schema-qualified names, ready to splice into SQL text. */
export interface Tables {
  readonly names: TableNames;
  readonly schema: string;
  readonly inbox: string;
  readonly outbox: string;
  readonly migrations: string;
  /** The outbox's ordering-key locks, `<outbox>_keys`. */
  readonly outboxKeys: string;
  /** A quoted name for an index or constraint of `table`, e.g. `"saga_outbox_unsent"`. */
  objectName(table: keyof Omit<TableNames, 'schema'>, suffix: string): string;
}

export function parseTables(input: TablesInput = {}): Tables {
  const parsed = tablesSchema.safeParse(input, IN_ENGLISH);
  if (!parsed.success) throw new ConfigError('postgres tables', problemsOf(parsed.error));
  const names = parsed.data;
  const quoted = (name: string) => `"${names.schema}"."${name}"`;
  // Index names are per schema; ≤ 63 bytes or Postgres truncates them silently.
  const derivedName = (table: keyof Omit<TableNames, 'schema'>, suffix: string) => `${names[table]}_${suffix}`.slice(0, 63);
  const keysName = derivedName('outbox', 'keys');
  const clash = (['inbox', 'outbox', 'migrations'] as const).find((table) => names[table] === keysName);
  if (clash) throw new ConfigError('postgres tables', [{ path: 'outbox', message: `its keys table "${keysName}" would be the ${clash} table: choose another outbox name` }]);
  return Object.freeze({
    names,
    schema: `"${names.schema}"`,
    inbox: quoted(names.inbox),
    outbox: quoted(names.outbox),
    migrations: quoted(names.migrations),
    outboxKeys: quoted(keysName),
    objectName: (table: keyof Omit<TableNames, 'schema'>, suffix: string) => `"${derivedName(table, suffix)}"`,
  });
}
