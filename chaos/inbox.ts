/**
 * Scenario 8's transactional inbox in PostgreSQL (the `test` database at 127.0.0.1:5432):
 * a handler inserts (consumer, event_id) with ON CONFLICT DO NOTHING and, only when the row
 * is new, appends the event's effect row — one transaction. The effect table has no unique
 * key (so a double application would show as two rows, and concurrent handlers never queue
 * on one hot row). Effects are exactly once iff every inbox row has exactly one effect row,
 * no effect row lacks its inbox row, and every committed event has its inbox row. Tables carry a per-run suffix: other suites share the database.
 *
 * This is the harness's own minimal inbox; when the product's Postgres inbox lands
 * (src/postgres, issue 16) the child's `commitInPostgres` is where it plugs in.
 */
import pg from 'pg';

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface InboxTables {
  readonly inbox: string;
  readonly effects: string;
}

export function inboxTables(suffix: string): InboxTables {
  const safe = suffix.replace(/[^a-z0-9_]/g, '_');
  return { inbox: `chaos_inbox_${safe}`, effects: `chaos_effects_${safe}` };
}

export async function createInbox(url: string, tables: InboxTables): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${tables.inbox} (consumer text NOT NULL, event_id text NOT NULL, PRIMARY KEY (consumer, event_id))`);
    await client.query(`CREATE TABLE ${tables.effects} (consumer text NOT NULL, event_id text NOT NULL, n bigint NOT NULL)`);
  } finally {
    await client.end();
  }
}

export async function dropInbox(url: string, tables: InboxTables): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS ${tables.inbox}, ${tables.effects}`);
  } finally {
    await client.end();
  }
}

/** In one transaction: the inbox row, and the effect only if the row is new. True when it was new. */
export async function commitInPostgres(pool: pg.Pool, tables: InboxTables, consumer: string, eventId: string, n: number): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const inserted = await client.query(`INSERT INTO ${tables.inbox} VALUES ($1, $2) ON CONFLICT DO NOTHING`, [consumer, eventId]);
    const fresh = inserted.rowCount === 1;
    if (fresh) await client.query(`INSERT INTO ${tables.effects} VALUES ($1, $2, $3)`, [consumer, eventId, n]);
    await client.query('COMMIT');
    return fresh;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export interface InboxState {
  readonly consumer: string;
  /** Event ids in the inbox. */
  readonly events: Set<string>;
  /** Inbox rows without exactly one effect row, and effect rows without an inbox row. */
  readonly badEffects: Array<{ eventId: string; effects: number; inInbox: boolean }>;
}

export async function readInbox(url: string, tables: InboxTables, consumers: readonly string[]): Promise<InboxState[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One snapshot of both tables: a commit landing between two reads must not look like a lost effect.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const states: InboxState[] = [];
    for (const consumer of consumers) {
      const inbox = await client.query<{ event_id: string }>(`SELECT event_id FROM ${tables.inbox} WHERE consumer = $1`, [consumer]);
      const bad = await client.query<{ event_id: string; effects: string; in_inbox: boolean }>(
        `SELECT coalesce(i.event_id, e.event_id) AS event_id, count(e.event_id) AS effects, bool_or(i.event_id IS NOT NULL) AS in_inbox
           FROM (SELECT event_id FROM ${tables.inbox} WHERE consumer = $1) i
           FULL JOIN (SELECT event_id FROM ${tables.effects} WHERE consumer = $1) e USING (event_id)
          GROUP BY 1 HAVING count(e.event_id) <> 1 OR NOT bool_or(i.event_id IS NOT NULL)`,
        [consumer],
      );
      states.push({
        consumer,
        events: new Set(inbox.rows.map((r) => r.event_id)),
        badEffects: bad.rows.map((r) => ({ eventId: r.event_id, effects: Number(r.effects), inInbox: r.in_inbox })),
      });
    }
    await client.query('COMMIT');
    return states;
  } finally {
    await client.end();
  }
}
