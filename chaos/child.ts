/**
 * One poll process of the chaos harness: a real child process running the product's public
 * API (createPoller + createSignedProcessor over ioredis) in a loop of runs, recording each
 * commit in its ledger file before the handler returns. It prints `START`/`RUN` lines so
 * the harness can check every run's deadline (I6). The harness SIGKILLs it at will.
 */
import { z } from 'zod';
// The public API, imported from its modules rather than the index so a restarted process
// does not load the HTTP and REST layers it never uses (restart time is fault-window time).
import { createSignedProcessor } from '../src/admission/signed-processor';
import { nodeHmac } from '../src/node/crypto';
import { createPoller } from '../src/consume/poller';
import { jsonPayload } from '../src/consume/processor';
import { connectIoredis, connectIoredisCluster } from '../src/redis/ioredis-port';
import type { RedisPort } from '../src/redis/port';
import { Deferral, Rejection } from '../src/verdict/verdict';
import { HMAC_KEY_ENV, type ChildConfig, type EarlyAckLine, type HandlerAction, type RunLine, type StartLine } from './child-config';
import type { FlowCommitLine, FlowEndLine, FlowStartLine } from './flow-check';
import { DEADLINE_OVERRUN_MS } from '../src/redis/deadline';
import { commitInPostgres } from './inbox';
import { LedgerWriter } from './ledger';
import { handlerTimeLimit, lastDeliveredId, probeClient, probeInTime, stillPending } from './probe';
import pg from 'pg';

const payloadSchema = z.object({ n: z.number(), plan: z.array(z.string()).optional() });
type Payload = z.infer<typeof payloadSchema>;

/** Upper bound of the simulated database commit latency, ms. */
const COMMIT_LATENCY_MS = 4;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // blocks the event loop on purpose: no timer can fire meanwhile
  }
}

/** A thrown value whose every inspection throws (SPEC §4: retain, and the run goes on). */
function uninspectable(): unknown {
  return Object.defineProperty({}, 'code', {
    get() {
      throw new Error('code getter throws');
    },
  });
}

function revokedProxy(): unknown {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function connect(config: ChildConfig): RedisPort {
  // Reconnect quickly after a fault; the product's own timeouts bound every exchange.
  const retry = { retryStrategy: () => 50, connectTimeout: 1_000 };
  if (config.redis.kind === 'standalone') return connectIoredis(config.redis.url, retry);
  return connectIoredisCluster([...config.redis.nodes], { redisOptions: { connectTimeout: 1_000 }, clusterRetryStrategy: () => 50 });
}

function emit(prefix: 'START' | 'RUN' | 'EARLY_ACK' | 'FLOW_START' | 'FLOW_END' | 'FLOW_COMMIT', line: StartLine | RunLine | EarlyAckLine | FlowStartLine | FlowEndLine | FlowCommitLine): void {
  process.stdout.write(`${prefix} ${JSON.stringify(line)}\n`);
}

async function main(config: ChildConfig): Promise<void> {
  const key = process.env[HMAC_KEY_ENV];
  if (!key) throw new Error(`${HMAC_KEY_ENV} is not set`);
  const ledger = new LedgerWriter(config.ledgerFile, config.ledgerSync);
  const port = connect(config);
  const { settings } = config;
  const probe = probeClient(config.probe);
  const pool = config.inbox && new pg.Pool({ connectionString: config.inbox.url, max: settings.concurrency });
  pool?.on('error', () => {});

  const act = async (action: HandlerAction, commit: () => Promise<'duplicate' | undefined>): Promise<unknown> => {
    switch (action) {
      case 'commit':
        return commit();
      case 'throw':
        throw new Error('transient failure');
      case 'defer':
        throw new Deferral('not yet');
      case 'timeout':
        await sleep(settings.handlerTimeoutMs + 100);
        return undefined; // too late: never committed
      case 'busy':
        busyWait(settings.handlerTimeoutMs + 150);
        return commit();
      case 'uninspectable':
        throw uninspectable();
      case 'revoked':
        throw revokedProxy();
      case 'bad-return':
        return 'retry'; // not a success value: must be retained, and nothing was committed
      case 'reject':
        throw new Rejection('chaos_rejected');
    }
  };

  // The current run's deadline (runs follow one another in a process): with the product's
  // own settle time (delivery.deadline) it bounds the probe's window.
  let runDeadline = Number.POSITIVE_INFINITY;
  const processor = createSignedProcessor<Payload>({
    stream: config.stream,
    auth: { mode: 'hmac', keyId: config.keyId, key, producer: config.producer },
    decode: jsonPayload(payloadSchema),
    hmac: nodeHmac, // native HMAC, as every Node entry point uses
    handler: async (delivery) => {
      const handlerStarted = Date.now();
      const limit = handlerTimeLimit(handlerStarted, settings.handlerTimeoutMs, Math.min(delivery.deadline, runDeadline - settings.settleReserveMs));
      const key = settings.flow ? delivery.flowKey : undefined;
      const commit = async (): Promise<'duplicate' | undefined> => {
        // A commit is a round trip to a database: it finishes after the handler's first
        // tick, so an ack sent before the handler returns would beat it to durability.
        await sleep(config.commitDelayMs + Math.random() * COMMIT_LATENCY_MS);
        const pending = await stillPending(probe, config.stream, config.group, delivery.entry.id);
        if (pending === false && probeInTime(Date.now(), limit)) {
          const lastDelivered = await lastDeliveredId(probe, config.stream, config.group);
          emit('EARLY_ACK', { pid: process.pid, group: config.group, entryId: delivery.entry.id, ...(lastDelivered ? { lastDelivered } : {}) });
        }
        // With the inbox, Postgres holds the commit; the ledger line after it is what the
        // checker compares acks with (written before the handler returns, as always).
        const fresh = pool ? await commitInPostgres(pool, config.inbox!.tables, config.group, delivery.eventId, delivery.payload.n) : true;
        await ledger.commit({ group: config.group, entryId: delivery.entry.id, eventId: delivery.eventId });
        // I10: when the key's next entry may start, under strict order.
        if (key !== undefined) emit('FLOW_COMMIT', { pid: process.pid, group: config.group, entryId: delivery.entry.id, at: Date.now() });
        return fresh ? undefined : 'duplicate';
      };
      const { n, plan } = delivery.payload;
      const retaining = config.retainEvery > 0 && n % config.retainEvery === 0 && delivery.deliveries <= config.retainDeliveries;
      // A Rejection is deterministic: from its delivery on, every later one rejects too
      // (a process crash in between may skip a delivery count).
      const rejectFrom = plan?.indexOf('reject') ?? -1;
      const planned = rejectFrom >= 0 && delivery.deliveries - 1 >= rejectFrom ? 'reject' : plan?.[delivery.deliveries - 1];
      const action = (retaining ? 'defer' : (planned ?? 'commit')) as HandlerAction;
      if (key === undefined) return (await act(action, commit)) as undefined;
      // I9: this handler's interval, from its first line to its last (a throw included).
      const entryId = delivery.entry.id;
      emit('FLOW_START', { pid: process.pid, group: config.group, key, entryId, start: handlerStarted, leaseEnd: runDeadline + DEADLINE_OVERRUN_MS });
      try {
        return (await act(action, commit)) as undefined;
      } finally {
        emit('FLOW_END', { pid: process.pid, entryId, start: handlerStarted, end: Date.now() });
      }
    },
  });

  let run = 0;
  for (;;) {
    run += 1;
    const consumer = config.perRunConsumer ? `${config.consumer}-${run}` : config.consumer;
    const startedAt = Date.now();
    const deadline = startedAt + settings.runBudgetMs;
    runDeadline = deadline;
    emit('START', { pid: process.pid, startedAt, deadline });
    let line: RunLine;
    try {
      const poller = createPoller({
        port,
        config: { stream: config.stream, group: config.group, consumer, ...settings },
        process: processor,
      });
      // No ensureGroup first: a run creates a missing group itself on NOGROUP, under its deadline.
      const report = await poller.run({ mode: config.mode, deadline });
      line = { pid: process.pid, consumer, startedAt, deadline, endedAt: Date.now(), acked: report.acked, deadLettered: report.deadLettered, retained: report.retained, deletedPending: report.deletedPending };
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      line = { pid: process.pid, consumer, startedAt, deadline, endedAt: Date.now(), error: typeof code === 'string' ? code : 'unknown' };
    }
    emit('RUN', line);
    await sleep(line.error ? Math.max(config.pauseMs, 50) : config.pauseMs);
  }
}

/** The harness killed with SIGKILL cannot stop its poll processes: each stops itself once orphaned. */
function exitWhenOrphaned(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
}

exitWhenOrphaned();
main(JSON.parse(process.argv[2]!) as ChildConfig).catch((error: unknown) => {
  process.stderr.write(`chaos child failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
