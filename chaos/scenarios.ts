/**
 * The chaos scenarios (issue 13), each a fault with a seed. Each group of a scenario is a
 * separate consumer group on one stream, read by real poll processes.
 */
import type { FaultContext, ScenarioDefinition } from './harness';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const TWO_GROUPS = [
  { name: 'g1', pollers: 2 },
  { name: 'g2', pollers: 2 },
] as const;

/**
 * 1: poll processes SIGKILLed at random moments (every 50–400 ms) and restarted. Only a
 * process past its start-up is killed: on a loaded machine start-up alone can take longer
 * than the interval, and killing a process before it runs tests nothing.
 */
async function killPollers(ctx: FaultContext): Promise<void> {
  while (!ctx.stopped()) {
    await sleep(ctx.rng.int(50, 400));
    const live = ctx.fleet.liveSlots;
    if (live.length === 0) continue;
    const slot = ctx.rng.pick(live);
    if (ctx.fleet.killAndRestart(slot, ctx.rng.int(0, 100)) !== undefined) ctx.fault();
  }
}

/** 2: Redis SIGKILLed (AOF, appendfsync always) and restarted on the same port and directory. */
async function killRedis(ctx: FaultContext): Promise<void> {
  const server = ctx.server!;
  try {
    while (!ctx.stopped()) {
      await sleep(ctx.rng.int(400, 2_000));
      if (ctx.stopped()) break;
      await server.kill9();
      ctx.fault();
      await sleep(ctx.rng.int(50, 800));
      await server.restart();
    }
  } finally {
    await server.restart();
  }
}

/** 3a: every open connection reset at random moments. */
async function dropConnections(ctx: FaultContext): Promise<void> {
  while (!ctx.stopped()) {
    await sleep(ctx.rng.int(100, 700));
    if (ctx.proxy!.dropAll() > 0) ctx.fault();
  }
}

/** 3b: every connection stalled (open, silent) for 0.2–3 s at a time. */
async function stallConnections(ctx: FaultContext): Promise<void> {
  while (!ctx.stopped()) {
    await sleep(ctx.rng.int(300, 1_500));
    ctx.fault();
    await ctx.proxy!.stall(ctx.rng.int(200, 3_000));
  }
}

/**
 * 3c: stalls that outlast minIdle (1.8–3 s, every 0.1–0.5 s), so the connection is frozen
 * most of the time. A settle sent just before a deadline is held past minIdle: another
 * consumer reclaims the entry and starts it before the first one's ack lands — a late
 * ack of committed work, which the checker must tell from an ack before commit.
 */
async function stallPastMinIdle(ctx: FaultContext): Promise<void> {
  while (!ctx.stopped()) {
    await sleep(ctx.rng.int(100, 500));
    if (ctx.stopped()) break;
    ctx.fault();
    await ctx.proxy!.stall(ctx.rng.int(1_800, 3_000));
  }
}

/** 4: the master owning the stream's slot fails over to its replica, again and again. */
async function failOver(ctx: FaultContext): Promise<void> {
  while (!ctx.stopped()) {
    await sleep(ctx.rng.int(800, 2_500));
    if (ctx.stopped()) break;
    try {
      const port = await ctx.cluster!.failover(ctx.stream);
      ctx.fault();
      ctx.log(`failed over to ${port}`);
    } catch (error) {
      // A replica still resyncing on a busy machine is Redis being slow, not a reason to stop
      // failing over for the rest of the scenario: skip this one and try again.
      ctx.log(`failover skipped: ${String(error)}`);
    }
  }
}

/**
 * 5: what a handler does on its first deliveries before it commits (or rejects). `busy`
 * blocks its process's event loop, so it is drawn less often than the rest.
 */
const TRANSIENT = ['throw', 'throw', 'defer', 'defer', 'timeout', 'timeout', 'uninspectable', 'revoked', 'bad-return', 'bad-return', 'busy'] as const;
const NEVER_COMMITS = TRANSIENT.filter((action) => action !== 'busy');

export const SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'crash',
    title: 'poll processes SIGKILLed every 50-400 ms and restarted',
    topology: 'standalone',
    groups: [
      { name: 'g1', pollers: 2, mode: 'drain', pauseMs: 20 },
      { name: 'g2', pollers: 2 },
    ],
    faults: killPollers,
  },
  {
    name: 'redis-kill',
    title: 'Redis kill -9 (AOF appendfsync always) and restart, same port and dir',
    topology: 'aof',
    groups: TWO_GROUPS,
    faults: killRedis,
  },
  {
    name: 'proxy-drop',
    title: 'TCP proxy resetting every connection at random moments',
    topology: 'standalone',
    proxy: true,
    groups: TWO_GROUPS,
    faults: dropConnections,
  },
  {
    name: 'proxy-stall',
    title: 'TCP proxy stalling every connection for 0.2-3 s',
    topology: 'standalone',
    proxy: true,
    groups: TWO_GROUPS,
    faults: stallConnections,
  },
  {
    name: 'proxy-long-stall',
    title: 'TCP proxy stalling every connection for 1.8-3 s every 0.1-0.5 s (longer than minIdle)',
    topology: 'standalone',
    proxy: true,
    // The race needs two consumers of one group even in the bounded run (one poller fewer).
    groups: [
      { name: 'g1', pollers: 3 },
      { name: 'g2', pollers: 3 },
    ],
    faults: stallPastMinIdle,
  },
  {
    name: 'cluster-failover',
    title: '3 masters + 3 replicas, CLUSTER FAILOVER of the stream\'s master mid-run',
    topology: 'cluster',
    groups: TWO_GROUPS,
    faults: failOver,
  },
  {
    name: 'handlers',
    maxEvents: 5_000,
    title: 'handlers that throw, time out, defer, busy-wait, throw uninspectable values, return bad values, reject',
    topology: 'standalone',
    groups: TWO_GROUPS,
    plan: (rng) => {
      // `busy` commits (late), so a plan that ends in a rejection draws only the transient
      // actions that never commit: an entry is either committed or dead-lettered, never both.
      if (rng.chance(0.01)) return [...Array.from({ length: rng.int(0, 2) }, () => rng.pick(NEVER_COMMITS)), 'reject'];
      if (!rng.chance(0.15)) return undefined;
      // Some keep failing for many deliveries: never dead-lettered however many it takes.
      return Array.from({ length: rng.chance(0.1) ? 5 : rng.int(1, 2) }, () => rng.pick(TRANSIENT));
    },
  },
  {
    name: 'poison',
    maxEvents: 5_000,
    title: 'poison catalogue XADDed directly beside normal traffic, read by two groups',
    topology: 'standalone',
    groups: TWO_GROUPS,
    poison: true,
  },
  {
    name: 'retention',
    maxEvents: 5_000,
    title: 'trim, DLT retention and reaper every 50-300 ms beside lagging and retaining groups',
    topology: 'standalone',
    groups: [
      { name: 'fast', pollers: 2, perRunConsumer: true },
      { name: 'lagging', pollers: 1, perRunConsumer: true, commitDelayMs: 3, pauseMs: 400, mode: 'drain' },
      { name: 'retaining', pollers: 1, perRunConsumer: true, retainEvery: 25, retainDeliveries: 3 },
    ],
    retention: true,
  },
  {
    name: 'scheduled',
    title: 'scheduled events (0-15 s ahead) moved by poll runs while pollers are SIGKILLed and Redis kill -9 (AOF)',
    topology: 'aof',
    groups: TWO_GROUPS,
    scheduled: { maxDelayMs: 15_000, boundedDelayMs: 3_000 },
    faults: async (ctx) => {
      await Promise.all([killPollers(ctx), killRedis(ctx)]);
    },
  },
  {
    name: 'flow-control',
    title: 'flow leases (strict order, and limit 2; 20 keys): pollers SIGKILLed, Redis kill -9 (AOF) and stalled connections together; never more handlers of a key in flight than its limit (I9), and under strict order none before the earlier ones committed (I10)',
    topology: 'aof',
    proxy: true,
    groups: [
      { name: 'g1', pollers: 3, flowLimit: 1, flowOrder: 'strict' },
      { name: 'g2', pollers: 3, flowLimit: 2 },
    ],
    flowKeys: 20,
    // Not `busy`: it blocks a process's event loop past its run's deadline, where a handler is
    // outside the lease's guarantee. `timeout` (a handler that ignores its signal) still ends
    // within its lease at these budgets, and keeps its key's slot until then.
    plan: (rng) => (rng.chance(0.1) ? Array.from({ length: rng.int(1, 2) }, () => rng.pick(NEVER_COMMITS)) : undefined),
    faults: async (ctx) => {
      await Promise.all([killPollers(ctx), killRedis(ctx), stallConnections(ctx)]);
    },
  },
  {
    name: 'inbox',
    title: 'Postgres inbox: pollers SIGKILLed and Redis kill -9 (AOF) together; effects exactly once',
    topology: 'aof',
    groups: TWO_GROUPS,
    inbox: true,
    // A Postgres commit (four statements and an fsync) on a loaded machine can take longer
    // than the default 300 ms; a timed-out handler's commit still lands, so the redelivery
    // is a duplicate the inbox absorbs — correct, but it only slows the drain.
    settings: { handlerTimeoutMs: 1_000, runBudgetMs: 2_000, minIdleMs: 2_500 },
    faults: async (ctx) => {
      await Promise.all([killPollers(ctx), killRedis(ctx)]);
    },
  },
];
