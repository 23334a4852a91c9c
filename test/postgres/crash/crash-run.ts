/**
 * Exactly-once effects under crashes: N events on a stream, each adding its amount (i + 1)
 * to a sum and 1 to a counter in Postgres, through the inbox. Poll processes (child.ts) are
 * SIGKILLed at random moments — and kill themselves right after some commits, before the
 * ack — and restarted until one drains the stream. Afterwards: counter = N, sum =
 * N(N+1)/2, one inbox row per event, nothing pending. A double application breaks the sum;
 * a lost event breaks the counter.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createPublisher } from '../../../src/publish/publisher';
import { connectIoredis } from '../../../src/redis/ioredis-port';
import { command } from '../../../src/redis/port';
import { runCommand } from '../../../src/redis/script';
import { migrate } from '../../../src/postgres/migrate';
import type { SqlDatabase } from '../../../src/postgres/sql';
import { parseTables } from '../../../src/postgres/tables';
import { CHAOS_CONSUMER, type ChildConfig } from './shared';

export interface CrashRunOptions {
  readonly events: number;
  readonly redisUrl: string;
  /**
   * The parent's connection for setup and checks, opened and closed around the children
   * (PGlite's folder is usable by one process at a time); the children open `childDatabase`.
   */
  readonly openDb: () => Promise<SqlDatabase>;
  readonly childDatabase: ChildConfig['database'];
  /** Random external kill delay after a child is ready, ms. */
  readonly killAfterMs: readonly [number, number];
  /**
   * A child is also killed once it has committed a random number of events in this range,
   * whichever comes first: a fast child (PGlite on an idle machine drains 300 events in under
   * the time range) still dies in its work instead of draining before its timer.
   */
  readonly killAfterCommits?: readonly [number, number];
  readonly selfKillProbability: number;
  /** After this many kills (external and self), children run undisturbed to the end. */
  readonly maxKills?: number;
  /** Give up (and fail) after this long. */
  readonly timeoutMs: number;
  readonly log?: (line: string) => void;
}

export interface CrashRunReport {
  readonly events: number;
  readonly applied: number;
  readonly sum: number;
  readonly expectedSum: number;
  readonly inboxRows: number;
  readonly pending: number;
  readonly kills: number;
  readonly selfKills: number;
  readonly duplicates: number;
  readonly children: number;
  readonly durationMs: number;
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

/** When the parent kills a child: `ms` after it is ready, or after its `commits`-th commit, whichever comes first. */
interface KillPlan {
  readonly ms: number;
  readonly commits: number;
}

const between = ([min, max]: readonly [number, number]) => min + Math.random() * (max - min);

function runChild(config: ChildConfig, kill: KillPlan): Promise<'drained' | 'killed' | 'failed'> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let timer: NodeJS.Timeout | undefined;
  let commits = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    out += text;
    commits += text.split('committed\n').length - 1;
    if (timer === undefined && out.includes('ready')) timer = setTimeout(() => child.kill('SIGKILL'), kill.ms);
    if (commits >= kill.commits) child.kill('SIGKILL');
  });
  child.stderr.on('data', (chunk) => (err += chunk));
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0 && out.includes('drained')) resolve('drained');
      else {
        process.stderr.write(`crash-run child failed (${code ?? signal}): ${err.slice(-2_000)}\n`);
        resolve('failed');
      }
    });
  });
}

async function publishEvents(redisUrl: string, stream: string, events: number): Promise<void> {
  const port = connectIoredis(redisUrl);
  try {
    await runCommand(port, command('XGROUP', 'CREATE', stream, 'chaos', '0-0', 'MKSTREAM'));
    const publisher = createPublisher({ port, routes: { amount: stream }, auth: { mode: 'exclusive-stream', producer: 'chaos' } });
    for (let start = 0; start < events; start += 500) {
      const batch = Array.from({ length: Math.min(500, events - start) }, (_, j) => start + j);
      await publisher.publishBatch(batch.map((i) => ({ eventType: 'amount', eventId: `ev-${i}`, payload: String(i + 1) })));
    }
  } finally {
    await port.close();
  }
}

export async function runCrashTest(options: CrashRunOptions): Promise<CrashRunReport> {
  const started = Date.now();
  const { events } = options;
  let db = await options.openDb();
  const schema = `chaos_${randomBytes(4).toString('hex')}`;
  const stream = `chaos:${schema}`;
  const tables = parseTables({ schema });
  await migrate(db, tables);
  const totals = `${tables.schema}.chaos_totals`;
  await db.query(`CREATE TABLE ${totals} (id int PRIMARY KEY, applied bigint NOT NULL, sum bigint NOT NULL, duplicates bigint NOT NULL, self_kills bigint NOT NULL)`);
  await db.query(`INSERT INTO ${totals} VALUES (1, 0, 0, 0, 0)`);
  await db.close();
  await publishEvents(options.redisUrl, stream, events);

  const config: ChildConfig = { redisUrl: options.redisUrl, stream, group: 'chaos', database: options.childDatabase, schema, selfKillProbability: options.selfKillProbability };
  const calm: ChildConfig = { ...config, selfKillProbability: 0 };
  const maxKills = options.maxKills ?? Number.POSITIVE_INFINITY;
  let kills = 0;
  let children = 0;
  for (;;) {
    if (Date.now() - started > options.timeoutMs) throw new Error(`crash run not drained within ${options.timeoutMs} ms after ${children} children`);
    const kill = { ms: between(options.killAfterMs), commits: options.killAfterCommits ? Math.round(between(options.killAfterCommits)) : Number.POSITIVE_INFINITY };
    const outcome = kills < maxKills ? await runChild(config, kill) : await runChild(calm, { ms: options.timeoutMs, commits: Number.POSITIVE_INFINITY });
    children += 1;
    if (outcome === 'failed') throw new Error('a crash-run child failed (see stderr)');
    if (outcome === 'drained') break;
    kills += 1;
    options.log?.(JSON.stringify({ msg: 'child killed', children, elapsedMs: Date.now() - started }));
  }
  db = await options.openDb();
  const [row] = await db.query<{ applied: string; sum: string; duplicates: string; self_kills: string }>(`SELECT applied::text, sum::text, duplicates::text, self_kills::text FROM ${totals}`);
  const [inbox] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${tables.inbox} WHERE consumer = $1`, [CHAOS_CONSUMER]);
  const port = connectIoredis(options.redisUrl);
  const [pending] = (await runCommand(port, command('XPENDING', stream, 'chaos'))) as [number];
  await runCommand(port, command('DEL', stream));
  await port.close();
  await db.query(`DROP SCHEMA ${tables.schema} CASCADE`);
  await db.close();
  return {
    events,
    applied: Number(row!.applied),
    sum: Number(row!.sum),
    expectedSum: (events * (events + 1)) / 2,
    inboxRows: Number(inbox!.n),
    pending: Number(pending),
    kills,
    selfKills: Number(row!.self_kills),
    duplicates: Number(row!.duplicates),
    children,
    durationMs: Date.now() - started,
  };
}
