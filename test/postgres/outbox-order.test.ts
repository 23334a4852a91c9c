/**
 * Outbox order across overlapping transactions (SPEC §6.1 "Outbox order"), on a real server
 * (PGlite runs one transaction at a time, so nothing there can overlap): T1 enqueues step-1
 * of key K, T2 enqueues step-2 of K and asks to commit before T1 does. While T1 is open the
 * relay publishes nothing of K; once T1 commits the stream holds step-1 then step-2; when T1
 * aborts, or its connection dies, step-2 goes out on its own, without waiting for anything.
 * What the key lock costs in conflicts (a deadlock across two keys, REPEATABLE READ) is a
 * retryable DB_CONFLICT. And two relays passing over one key at once never publish its rows
 * out of id order.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createPublisher, type Publisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createOutbox, type OutboxEvent } from '../../src/postgres/outbox';
import { relayOutbox } from '../../src/postgres/relay';
import { pruneTables } from '../../src/postgres/retention';
import type { SqlDatabase, SqlTx, TransactionOptions } from '../../src/postgres/sql';
import type { Tables } from '../../src/postgres/tables';
import { adminClient, uniquePrefix } from '../support/redis';
import { freshTables, pgKind } from './support/databases';

const KEY = 'K';
/** How long a transaction may stay blocked after the one it waits for ended: "not forever". */
const UNBLOCK_WITHIN_MS = 5_000;

class Aborted extends Error {}

/** Transactions a test left open (it failed half-way): rolled back after each test. */
const leftOpen = new Set<() => void>();

interface OpenTransaction {
  /** The backend running it (to watch or kill it). */
  readonly pid: number;
  /** Lets it commit; resolves once it has. */
  commit(): Promise<void>;
  /** Lets it roll back; resolves with what its transaction threw (an Aborted, unless it died). */
  abort(): Promise<unknown>;
}

/** Runs `work` in a transaction of `db` and keeps it open until the test commits or aborts it. */
async function openTransaction(db: SqlDatabase, work: (tx: SqlTx) => Promise<unknown>): Promise<OpenTransaction> {
  let decide!: (commit: boolean) => void;
  const decision = new Promise<boolean>((resolve) => (decide = resolve));
  const rollBack = () => decide(false);
  leftOpen.add(rollBack);
  let pid = 0;
  let worked!: () => void;
  const ready = new Promise<void>((resolve) => (worked = resolve));
  const run = db.transaction(async (tx) => {
    pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
    await work(tx);
    worked();
    if (!(await decision)) throw new Aborted();
  });
  const ended = run.then(
    () => undefined,
    (error: unknown) => error,
  );
  void ended.then(() => leftOpen.delete(rollBack));
  await Promise.race([ready, ended.then((error) => Promise.reject(error))]);
  return {
    pid,
    commit: async () => {
      decide(true);
      await run;
    },
    abort: async () => {
      decide(false);
      return ended;
    },
  };
}

type Progress = 'committed' | 'waiting on a lock' | 'failed';

/** Watches a transaction the test does not hold: it either commits or waits on a lock. */
function watchTransaction(db: SqlDatabase, observer: SqlDatabase, work: (tx: SqlTx) => Promise<unknown>, options?: TransactionOptions) {
  let pid: number | undefined;
  let outcome: Progress | undefined;
  const done = db
    .transaction(async (tx) => {
      pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
      await work(tx);
    }, options)
    .then(
      () => void (outcome = 'committed'),
      (error: unknown) => ((outcome = 'failed'), Promise.reject(error)),
    );
  done.catch(() => {});
  const waitingOnLock = async () =>
    pid !== undefined &&
    (await observer.query<{ wait: string | null }>('SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1', [pid]))[0]?.wait === 'Lock';
  return {
    done,
    /** Resolves once the transaction committed, failed, or is blocked on a lock. */
    async progress(): Promise<Progress> {
      const deadline = Date.now() + UNBLOCK_WITHIN_MS;
      while (Date.now() < deadline) {
        if (outcome !== undefined) return outcome;
        if (await waitingOnLock()) return 'waiting on a lock';
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`the transaction neither committed nor waited on a lock within ${UNBLOCK_WITHIN_MS} ms`);
    },
  };
}

/** `promise`, or a failure naming `what` when it takes longer than UNBLOCK_WITHIN_MS. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${UNBLOCK_WITHIN_MS} ms`)), UNBLOCK_WITHIN_MS)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('pg: one key publishes in enqueue order when its transactions overlap', () => {
  let db: SqlDatabase;
  let other: SqlDatabase;
  let tables: Tables;
  let drop: () => Promise<void>;
  let port: RedisPort;
  let admin: Redis;
  let stream: string;
  let publisher: Publisher;
  beforeAll(async () => {
    db = await pgKind.open();
    other = await pgKind.open();
    ({ tables, drop } = await freshTables(db));
    port = connectIoredis(inject('redisUrl'));
    admin = adminClient();
  });
  afterAll(async () => {
    await drop?.();
    await db?.close();
    await other?.close();
    await port?.close();
    admin?.disconnect();
  });
  beforeEach(async () => {
    stream = `${uniquePrefix()}:order`;
    publisher = createPublisher({ port, routes: { 'step.done': stream }, auth: { mode: 'exclusive-stream', producer: 'saga' }, dedupeWindowSeconds: 0 });
    await db.query(`TRUNCATE ${tables.outbox}, ${tables.outboxKeys}`);
  });
  afterEach(() => {
    for (const rollBack of leftOpen) rollBack();
  });

  const step = (eventId: string, orderingKey = KEY): OutboxEvent => ({ producer: 'saga', eventType: 'step.done', eventId, payload: eventId, orderingKey });
  const enqueue = (event: OutboxEvent) => (tx: SqlTx) => createOutbox(tables).enqueue(tx, event);
  const relay = () => relayOutbox(db, tables, () => publisher);
  const published = async () => (await admin.xrange(stream, '-', '+')).map(([, f]) => f[f.indexOf('event_id') + 1]);

  /** T1 holds step-1 of K open; T2 enqueues step-2 of K and commits as soon as it can. */
  async function crosswise() {
    const t1 = await openTransaction(db, enqueue(step('step-1')));
    const t2 = watchTransaction(other, db, enqueue(step('step-2')));
    const t2Progress = await t2.progress();
    // Meanwhile: T1 may still commit step-1, so nothing of K may go out.
    expect(await relay()).toMatchObject({ published: 0 });
    expect(await published()).toEqual([]);
    return { t1, t2, t2Progress };
  }

  it('T2 asks to commit first: while T1 is open the relay publishes nothing of K; then step-1, step-2', async () => {
    const { t1, t2, t2Progress } = await crosswise();
    // How the order is kept: T2's enqueue waits on K's lock, which T1 holds until it ends.
    expect(t2Progress).toBe('waiting on a lock');
    await t1.commit();
    await within(t2.done, 'T2 after T1 committed');
    expect(await relay()).toMatchObject({ published: 2 });
    expect(await published()).toEqual(['step-1', 'step-2']);
  });

  it('T1 aborts: step-2 goes out alone, T2 not blocked past the abort', async () => {
    const { t1, t2 } = await crosswise();
    expect(await t1.abort()).toBeInstanceOf(Aborted);
    await within(t2.done, 'T2 after T1 aborted');
    expect(await relay()).toMatchObject({ published: 1 });
    expect(await published()).toEqual(['step-2']);
  });

  it("T1's connection dies (a crashed enqueuer): step-2 goes out alone, T2 not blocked past the crash", async () => {
    const { t1, t2 } = await crosswise();
    // The server ends T1 with its backend; the client side (still waiting) learns it later.
    await db.query('SELECT pg_terminate_backend($1)', [t1.pid]);
    await within(t2.done, 'T2 after T1 died');
    expect(await relay()).toMatchObject({ published: 1 });
    expect(await published()).toEqual(['step-2']);
    expect(await t1.abort()).toMatchObject({ code: 'DB_UNAVAILABLE' });
  });

  it('other keys are not held: L enqueued beside an open K transaction publishes', async () => {
    const t1 = await openTransaction(db, enqueue(step('k-1')));
    try {
      await within(other.transaction(enqueue(step('l-1', 'L'))), 'an enqueue of another key');
      expect(await relay()).toMatchObject({ published: 1 });
      expect(await published()).toEqual(['l-1']);
    } finally {
      await t1.commit();
    }
    expect(await relay()).toMatchObject({ published: 1 });
    expect(await published()).toEqual(['l-1', 'k-1']);
  });

  it('two transactions taking two keys in opposite orders deadlock: Postgres ends one (DB_CONFLICT), the other commits', async () => {
    let arrived = 0;
    let bothHoldOne!: () => void;
    const barrier = new Promise<void>((resolve) => (bothHoldOne = resolve));
    const crossing = (on: SqlDatabase, first: string, second: string) =>
      on.transaction(async (tx) => {
        await enqueue(step(`${first}-first`, first))(tx);
        if (++arrived === 2) bothHoldOne();
        await barrier;
        await enqueue(step(`${first}-then-${second}`, second))(tx);
      });
    const outcomes = await Promise.allSettled([crossing(db, 'A', 'B'), crossing(other, 'B', 'A')]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toMatchObject({ code: 'DB_CONFLICT', sqlState: '40P01' });
    expect(await relay()).toMatchObject({ published: 2 });
  });

  it('REPEATABLE READ: enqueueing a key an overlapping transaction created first is DB_CONFLICT (40001), never out of order', async () => {
    const t1 = await openTransaction(db, enqueue(step('n-1', 'N')));
    const t2 = watchTransaction(other, db, async (tx) => enqueue(step('n-2', 'N'))(tx), { isolation: 'repeatable read' });
    expect(await t2.progress()).toBe('waiting on a lock');
    await t1.commit();
    await expect(within(t2.done, 'T2 after T1 committed')).rejects.toMatchObject({ code: 'DB_CONFLICT', sqlState: '40001' });
    expect(await relay()).toMatchObject({ published: 1 });
    expect(await published()).toEqual(['n-1']);
  });

  it("retention skips the key row an open enqueue holds: it neither waits for it nor deletes it", async () => {
    await db.transaction(enqueue(step('k-old')));
    await db.query(`UPDATE ${tables.outbox} SET sent_at = now() - interval '10 days'`);
    const t1 = await openTransaction(db, enqueue(step('k-new')));
    try {
      const report = await within(pruneTables(other, tables, { inboxRetentionSeconds: 86_400, sentRetentionSeconds: 86_400 }), 'retention beside an open enqueue');
      expect(report).toMatchObject({ outboxDeleted: 1, outboxKeysDeleted: 0 });
    } finally {
      await t1.commit();
    }
    expect(await db.query(`SELECT ordering_key FROM ${tables.outboxKeys}`)).toEqual([{ ordering_key: KEY }]);
    expect(await relay()).toMatchObject({ published: 1 });
  });

  it('two relays at once: while relay A is publishing row 1 of K, relay B publishes none of K', async () => {
    await db.transaction(async (tx) => {
      for (const e of [step('k-1'), step('k-2'), step('l-1', 'L'), step('k-3')]) await createOutbox(tables).enqueue(tx, e);
    });
    let inPublish!: () => void;
    const publishing = new Promise<void>((resolve) => (inPublish = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    // Relay A claims only row 1 (batch 1) and stops inside its publish, holding the row locked.
    const paused: Publisher = {
      ...publisher,
      async publishBatch(events) {
        inPublish();
        await resumed;
        return publisher.publishBatch(events);
      },
    };
    const relayA = relayOutbox(db, tables, () => paused, { batch: 1 });
    try {
      await within(publishing, 'relay A reaching its publish');
      // Relay B skips the locked row 1; rows 2 and 3 of K must wait for it, L goes out.
      expect(await relayOutbox(other, tables, () => publisher)).toMatchObject({ published: 1, heldBack: 2 });
      expect(await published()).toEqual(['l-1']);
    } finally {
      resume();
    }
    expect(await relayA).toMatchObject({ published: 1 });
    expect(await relayOutbox(other, tables, () => publisher)).toMatchObject({ published: 2 });
    expect(await published()).toEqual(['l-1', 'k-1', 'k-2', 'k-3']);
  });
});
