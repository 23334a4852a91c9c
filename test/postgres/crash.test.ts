/**
 * The bounded form of the crash run (crash/crash-run.ts; the full form is
 * `npm run chaos:postgres`, 5,000 events): poll processes SIGKILLed at random moments and
 * right after commits (before their acks) — every event's effect applied exactly once
 * (counter and sum), none lost, nothing pending, redeliveries absorbed by the inbox. On pg
 * (the service) and PGlite (a folder reopened by each new process).
 */
import { rmSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { connectPg } from '../../src/postgres/pg';
import { openPglite } from '../../src/postgres/pglite';
import { runCrashTest } from './crash/crash-run';
import { openPgliteCopy, pgUrl } from './support/databases';

describe('exactly-once effects under SIGKILL', () => {
  it('pg: 1,000 events, 4 kills', async () => {
    const report = await runCrashTest({
      events: 1_000,
      redisUrl: inject('redisUrl'),
      openDb: async () => connectPg({ connectionString: pgUrl() }),
      childDatabase: { kind: 'pg', url: pgUrl() },
      killAfterMs: [300, 1_500],
      killAfterCommits: [20, 200],
      selfKillProbability: 0.004,
      maxKills: 4,
      timeoutMs: 170_000,
    });
    console.log(JSON.stringify({ crash: 'pg', ...report }));
    expect(report).toMatchObject({ applied: 1_000, sum: report.expectedSum, inboxRows: 1_000, pending: 0 });
    expect(report.kills).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it('pglite: 300 events, 2 kills', async () => {
    const { db, dataDir } = await openPgliteCopy();
    await db.close();
    try {
      const report = await runCrashTest({
        events: 300,
        redisUrl: inject('redisUrl'),
        openDb: () => openPglite({ dataDir }),
        childDatabase: { kind: 'pglite', dataDir },
        killAfterMs: [500, 2_000],
        killAfterCommits: [10, 60],
        selfKillProbability: 0.01,
        maxKills: 2,
        timeoutMs: 170_000,
      });
      console.log(JSON.stringify({ crash: 'pglite', ...report }));
      expect(report).toMatchObject({ applied: 300, sum: report.expectedSum, inboxRows: 300, pending: 0 });
      expect(report.kills).toBeGreaterThanOrEqual(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
