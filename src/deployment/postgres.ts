/**
 * The deployment's Postgres as the runtime hands it out: the database (opened once, on first
 * use, by whatever the platform entry point supplies — node-postgres on Lambda and servers,
 * PGlite in the local stack) with the inbox and outbox over the configured table names.
 */
import { PostgresError } from '../postgres/errors';
import { createInbox } from '../postgres/inbox';
import { createOutbox } from '../postgres/outbox';
import { parseTables } from '../postgres/tables';
import type { DeploymentConfig } from './define-config';
import type { Postgres, PostgresContext } from './postgres-kit';

export type { Postgres, PostgresContext } from './postgres-kit';

export function postgresOf(config: DeploymentConfig, open: PostgresContext['open'] | undefined): () => Promise<Postgres> {
  let opened: Promise<Postgres> | undefined;
  return () => {
    const section = config.data.postgres;
    if (!section || !open) {
      const why = section ? 'this entry point was given no database' : 'the config has no postgres section';
      return Promise.reject(new PostgresError('DB_NOT_CONFIGURED', `deployment ${config.name} has no database: ${why}`));
    }
    opened ??= open().then(
      (db) => {
        const tables = parseTables(section.tables);
        return { db, tables, inbox: createInbox(tables), outbox: createOutbox(tables) };
      },
      (error: unknown) => {
        opened = undefined;
        throw error;
      },
    );
    return opened;
  };
}
