/**
 * One poll process of the crash run (crash-run.ts): polls the chaos stream and applies each
 * event's amount to a sum and a counter in ONE transaction with its inbox row. The parent
 * SIGKILLs it at random moments; it also kills itself, with a small probability, right after
 * a commit and before the entry is acked — the window the inbox exists for. It exits 0 once
 * the stream is drained: nothing pending, nothing unread.
 *
 * argv[2]: JSON ChildConfig. Prints `ready` once connected (the parent's kill timer starts
 * then, so kills land in the work rather than in module loading), `committed` after each
 * commit (the parent may kill after a number of them) and `drained` at the end.
 */
import { createPoller } from '../../../src/consume/poller';
import { createProcessor, rawPayload } from '../../../src/consume/processor';
import { connectIoredis } from '../../../src/redis/ioredis-port';
import { command } from '../../../src/redis/port';
import { runCommand } from '../../../src/redis/script';
import { createInbox } from '../../../src/postgres/inbox';
import { connectPg } from '../../../src/postgres/pg';
import { openPglite } from '../../../src/postgres/pglite';
import { parseTables } from '../../../src/postgres/tables';
import type { SqlDatabase } from '../../../src/postgres/sql';
import { CHAOS_CONSUMER, CHILD_BUDGETS, type ChildConfig } from './shared';

const config = JSON.parse(process.argv[2]!) as ChildConfig;
const text = new TextDecoder();
const db: SqlDatabase =
  config.database.kind === 'pg' ? connectPg({ connectionString: config.database.url, max: 2 }) : await openPglite({ dataDir: config.database.dataDir });
const tables = parseTables({ schema: config.schema });
const inbox = createInbox(tables);
const totals = `${tables.schema}.chaos_totals`;
const port = connectIoredis(config.redisUrl);

process.stdout.write('ready\n');
const poller = createPoller({
  port,
  config: { stream: config.stream, group: config.group, consumer: `c-${process.pid}`, ...CHILD_BUDGETS },
  process: createProcessor(rawPayload, async ({ eventId, payload }) => {
    const amount = Number(text.decode(payload));
    const outcome = await inbox.handle(db, { consumer: CHAOS_CONSUMER, eventId }, async (tx) => {
      await tx.query(`UPDATE ${totals} SET applied = applied + 1, sum = sum + $1 WHERE id = 1`, [amount]);
    });
    // One line per commit: the parent may kill this process after a number of them.
    if (outcome === undefined) process.stdout.write('committed\n');
    if (outcome === 'duplicate') {
      // Statistics only, outside the inbox transaction: how many redeliveries were absorbed.
      await db.query(`UPDATE ${totals} SET duplicates = duplicates + 1 WHERE id = 1`);
    } else if (Math.random() < config.selfKillProbability) {
      await db.query(`UPDATE ${totals} SET self_kills = self_kills + 1 WHERE id = 1`);
      process.kill(process.pid, 'SIGKILL'); // committed, not acked
    }
    return outcome;
  }),
});

async function drained(): Promise<boolean> {
  const [pending] = (await runCommand(port, command('XPENDING', config.stream, config.group))) as [number];
  const groups = (await runCommand(port, command('XINFO', 'GROUPS', config.stream))) as unknown[][];
  const group = groups.map((g) => g.map(String)).find((g) => g[g.indexOf('name') + 1] === config.group)!;
  return Number(pending) === 0 && Number(group[group.indexOf('lag') + 1]) === 0;
}

for (;;) {
  // A failed run (e.g. Redis not answering before the deadline on a loaded machine) leaves its
  // entries pending, as a failed poll function would: run again, as the next trigger would.
  const report = await poller.run({ mode: 'drain', deadline: Date.now() + CHILD_BUDGETS.runBudgetMs }).catch(() => undefined);
  if (!report) continue;
  if (report.handled === 0 && (await drained())) break;
  if (report.handled === 0) await new Promise((resolve) => setTimeout(resolve, 200)); // waiting for minIdle
}
await port.close();
await db.close();
process.stdout.write('drained\n');
