/**
 * Runs one chaos scenario: private Redis (standalone, crashable AOF, or a replicated
 * Cluster), optional fault proxy, poll processes per group, a publisher, the scenario's
 * faults, and the invariant checker live (every few hundred ms) and at the end.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createPublisher, deriveStreamKeys, runRetention, type PublishEvent, type RedisPort } from '../src/index';
import { parseRetentionConfig } from '../src/internal';
import { scheduleKeys } from '../src/entry/schedule-keys';
import { connectIoredis, connectIoredisCluster } from '../src/node';
import { startFaultProxy, type FaultProxy } from '../test/support/fault-proxy';
import type { ChildConfig, ChildSettings, RedisTarget } from './child-config';
import { createInbox, DEFAULT_POSTGRES_URL, dropInbox, inboxTables, readInbox } from './inbox';
import { History, INVARIANTS, type Invariant, type Violation } from './checker';
import { removeFolder, Teardown, trackFolder } from './cleanup';
import { ScheduleWatch } from './scheduled';
import { Fleet } from './fleet';
import { FlowIntervals } from './flow-check';
import { compareIds } from './ids';
import { poisonCatalogue, type SigningKey } from './poison';
import { createRng, type Rng } from './rng';
import { startCrashableRedis, startPlainRedis, startReplicatedCluster, type CrashableServer, type ReplicatedCluster } from './servers';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface GroupSpec {
  readonly name: string;
  readonly pollers: number;
  readonly mode?: 'drain' | 'continuous';
  readonly perRunConsumer?: boolean;
  readonly pauseMs?: number;
  readonly commitDelayMs?: number;
  readonly retainEvery?: number;
  readonly retainDeliveries?: number;
  /** Flow leases on for this group, with this limit (I9). */
  readonly flowLimit?: number;
  /** With flowLimit 1: strict per-key order (I10). */
  readonly flowOrder?: 'strict';
}

export interface Sizes {
  /** Normal events published. */
  readonly events: number;
  readonly publishPerSecond: number;
  /** How long to wait for every entry to be resolved after publishing ends. */
  readonly drainTimeoutMs: number;
  readonly ledgerSync: 'write' | 'fsync';
  /** Catalogue rounds (poison scenario) and whether they include the 5 MiB entries. */
  readonly poisonRounds: number;
  readonly bigPoison: boolean;
  /** Poll processes per group added to (or, negative, taken from) each scenario's count; at least one. */
  readonly scale: number;
  /** Faults go on at least this long after publishing starts, even when publishing ends sooner. */
  readonly faultWindowMs: number;
}

export interface FaultContext {
  readonly rng: Rng;
  readonly fleet: Fleet;
  readonly history: History;
  readonly server?: CrashableServer;
  readonly cluster?: ReplicatedCluster;
  readonly proxy?: FaultProxy;
  readonly stream: string;
  /** True once publishing ended: fault loops stop and heal. */
  stopped(): boolean;
  fault(): void;
  log(line: string): void;
}

export interface ScenarioDefinition {
  readonly name: string;
  readonly title: string;
  readonly topology: 'standalone' | 'aof' | 'cluster';
  readonly proxy?: boolean;
  readonly groups: readonly GroupSpec[];
  readonly settings?: Partial<ChildSettings>;
  /** A handler plan per normal event (scenario 5): what deliveries 1..n do before committing. */
  readonly plan?: (rng: Rng, n: number) => string[] | undefined;
  readonly poison?: boolean;
  readonly retention?: boolean;
  /** Scenario 8: handlers commit through a Postgres inbox; effects are checked exactly once (I7). */
  readonly inbox?: boolean;
  readonly faults?: (ctx: FaultContext) => Promise<void>;
  /** At most this many events even in a full run (scenarios that are not about crashes). */
  readonly maxEvents?: number;
  /**
   * Scenario `scheduled`: each event is published with a delay drawn from 0..maxDelayMs (a
   * full run) or 0..boundedDelayMs (the bounded one); the poll runs move them (I8), and the
   * faults go on until the last is due.
   */
  readonly scheduled?: { readonly maxDelayMs: number; readonly boundedDelayMs: number };
  /** Scenario `flow-control`: event n is published with flow key `k<n mod flowKeys>`. */
  readonly flowKeys?: number;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly title: string;
  readonly seed: number;
  readonly published: number;
  readonly poison: number;
  readonly groups: number;
  readonly committed: number;
  readonly duplicates: number;
  readonly duplicateRate: number;
  readonly pending: number;
  readonly dltRecords: number;
  readonly violations: number;
  readonly violationsByInvariant: Record<Invariant, number>;
  readonly violationDetails: Violation[];
  readonly worstOvershootMs: number | null;
  readonly runs: number;
  readonly runErrors: number;
  readonly kills: number;
  readonly faults: number;
  /** Retention scenario: entries the safe trim removed, consumers the reaper deleted. */
  readonly trimmed?: number;
  readonly reaped?: number;
  /** Scenario `scheduled`: events scheduled, moved into the stream, still waiting, and how late the moves were. */
  readonly scheduled?: { readonly scheduled: number; readonly moved: number; readonly waiting: number; readonly worstLatenessMs: number; readonly meanLatenessMs: number };
  /** Entries a handler held that Redis no longer counted as delivered (its last-delivered id fell back). */
  readonly forgottenDeliveries: number;
  /** Entries a handler found acked under it by another consumer that had committed them (late acks, not I2). */
  readonly lateAcksOfCommitted: number;
  /** Scenario `flow-control`: handlers of keyed entries seen, those that ran past their lease (outside I9's guarantee), and entries committed per group. */
  readonly flow?: { readonly handlers: number; readonly pastLease: number; readonly committedByGroup: Readonly<Record<string, number>> };
  readonly snapshots: number;
  readonly durationMs: number;
  readonly replay: string;
}

export const DEFAULT_SETTINGS: ChildSettings = {
  batch: 50,
  handlerTimeoutMs: 300,
  runBudgetMs: 1_200,
  minIdleMs: 1_700,
  settleReserveMs: 200,
  concurrency: 8,
  blockMs: 100,
  // Backoff on (1.7, 3.4, 3.4 … s): chaos exercises it, and a plan that fails five times still
  // drains within the bounded run's 30 s wait.
  retry: { maxMs: 3_400 },
};

export const HMAC_KEY: SigningKey = { keyId: 'k1', secret: 'chaos-harness-signing-key-0001' };
const PRODUCER = 'chaos';
const EVENT_TYPE = 'chaos.event';
const SNAPSHOT_TIMEOUT_MS = 5_000;
const PUBLISH_BATCH = 50;

type Admin = Redis | Cluster;

interface Topology {
  readonly direct: RedisTarget;
  readonly server?: CrashableServer;
  readonly cluster?: ReplicatedCluster;
  stop(): Promise<void>;
}

async function startTopology(kind: ScenarioDefinition['topology']): Promise<Topology> {
  if (kind === 'standalone') {
    const server = await startPlainRedis();
    return { direct: { kind: 'standalone', url: server.url }, stop: server.stop };
  }
  if (kind === 'aof') {
    const server = await startCrashableRedis();
    return { direct: { kind: 'standalone', url: server.url }, server, stop: server.stop };
  }
  const cluster = await startReplicatedCluster(3);
  return { direct: { kind: 'cluster', nodes: cluster.nodes }, cluster, stop: cluster.stop };
}

function adminOf(target: RedisTarget): Admin {
  const options = { maxRetriesPerRequest: 1, retryStrategy: () => 100, connectTimeout: 1_000 };
  const admin = target.kind === 'standalone' ? new Redis(target.url, options) : new Cluster([...target.nodes], { redisOptions: options, clusterRetryStrategy: () => 100 });
  admin.on('error', () => {});
  return admin;
}

function portOf(target: RedisTarget): RedisPort {
  return target.kind === 'standalone'
    ? connectIoredis(target.url, { retryStrategy: () => 50, connectTimeout: 1_000 })
    : connectIoredisCluster([...target.nodes], { redisOptions: { connectTimeout: 1_000 }, clusterRetryStrategy: () => 50 });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error('timed out')))]);
}

/** Retries until it works or the time is up (Redis may be down, failing over, or behind a stalled proxy). */
async function persist<T>(what: string, work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await withTimeout(work(), 5_000);
    } catch (error) {
      if (Date.now() > until) throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      await sleep(100);
    }
  }
}

export interface RunOptions {
  readonly seed: number;
  readonly sizes: Sizes;
  readonly bundle: string;
  readonly log?: (line: string) => void;
}

/**
 * Runs one scenario and stops everything it started — servers, proxy, poll processes,
 * connections, folders, inbox tables — however it ends (chaos/cleanup.ts).
 */
export async function runScenario(def: ScenarioDefinition, options: RunOptions): Promise<ScenarioResult> {
  const teardown = new Teardown();
  let result: ScenarioResult;
  try {
    result = await play(def, options, teardown);
  } catch (error) {
    await teardown.run();
    throw error;
  }
  const failures = await teardown.run();
  if (failures.length > 0) throw new AggregateError(failures, `${def.name}: stopping what the scenario started failed`);
  return result;
}

/** The scenario itself; every thing it starts goes onto `teardown` as soon as it exists. */
async function play(def: ScenarioDefinition, options: RunOptions, teardown: Teardown): Promise<ScenarioResult> {
  const { seed } = options;
  const sizes: Sizes = { ...options.sizes, events: Math.min(options.sizes.events, def.maxEvents ?? Number.POSITIVE_INFINITY) };
  const log = (line: string) => options.log?.(`[${def.name}] ${line}`);
  const rng = createRng(seed);
  const startedAt = Date.now();
  const topology = await startTopology(def.topology);
  teardown.add(() => topology.stop());
  const proxy = def.proxy && topology.direct.kind === 'standalone' ? await startFaultProxy('127.0.0.1', Number(new URL(topology.direct.url).port)) : undefined;
  if (proxy) teardown.add(() => proxy.close());
  const childTarget: RedisTarget = proxy ? { kind: 'standalone', url: proxy.url } : topology.direct;
  const admin = adminOf(topology.direct);
  teardown.add(() => admin.disconnect());
  const publishPort = portOf(topology.direct);
  teardown.add(() => publishPort.close().catch(() => undefined));
  const stream = `chaos:{c}:${def.name}`;
  const keys = deriveStreamKeys(stream, def.groups[0]!.name);
  const ledgerDir = trackFolder(mkdtempSync(join(tmpdir(), 'saga-chaos-ledger-')));
  teardown.add(() => removeFolder(ledgerDir));
  const groupNames = def.groups.map((g) => g.name);
  const history = new History(stream, keys.dlt, groupNames, ledgerDir);
  const flow = new FlowIntervals();
  const watch = def.scheduled ? new ScheduleWatch(stream, history) : undefined;
  const maxDelayMs = def.scheduled ? (sizes.events > 1_000 ? def.scheduled.maxDelayMs : def.scheduled.boundedDelayMs) : 0;
  const postgresUrl = process.env.CHAOS_POSTGRES_URL ?? DEFAULT_POSTGRES_URL;
  const tables = def.inbox ? inboxTables(`${def.name}_${seed}_${process.pid}_${Date.now()}`) : undefined;
  if (tables) await createInbox(postgresUrl, tables);
  if (tables) teardown.add(() => dropInbox(postgresUrl, tables).catch(() => undefined));
  let faults = 0;
  let trimmed = 0;
  let reaped = 0;
  let publishing = true;
  let done = false;

  const fleet = new Fleet(options.bundle, HMAC_KEY.secret, {
    onRun: (line) => history.runEnded(line),
    onStart: (line) => history.runStarted(line),
    onEarlyAck: (line) => history.earlyAck(line),
    onFlowStart: (line) => flow.started(line),
    onFlowEnd: (line) => flow.ended(line),
    onFlowCommit: (line) => flow.committed(line),
    onGone: (pid, at) => {
      history.processGone(pid, at);
      flow.processGone(pid, at);
    },
    onCrash: (slot, pid, code, signal, stderr) => {
      history.violate('I3', `crash ${slot} ${pid}`, `poll process ${slot} (pid ${pid}) died on its own (exit ${code ?? signal}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
    },
  });
  const background: Array<Promise<void>> = [];
  teardown.add(async () => {
    done = true;
    publishing = false;
    await fleet.stop();
    await Promise.allSettled(background);
  });
  for (const group of groupNames) {
    await persist('create group', () => admin.xgroup('CREATE', stream, group, '0', 'MKSTREAM').catch((e: Error) => (e.message.includes('BUSYGROUP') ? 'OK' : Promise.reject(e))));
  }
  const settings: ChildSettings = { ...DEFAULT_SETTINGS, ...def.settings };
  for (const group of def.groups) {
    const pollers = Math.max(1, group.pollers + sizes.scale);
    for (let i = 0; i < pollers; i += 1) {
      const slot = `${group.name}-p${i}`;
      const config: ChildConfig = {
        redis: childTarget,
        probe: topology.direct,
        stream,
        group: group.name,
        consumer: slot,
        perRunConsumer: group.perRunConsumer ?? false,
        ledgerFile: join(ledgerDir, `${slot}.ledger`),
        ledgerSync: sizes.ledgerSync,
        keyId: HMAC_KEY.keyId,
        producer: PRODUCER,
        mode: group.mode ?? 'continuous',
        pauseMs: group.pauseMs ?? 0,
        commitDelayMs: group.commitDelayMs ?? 0,
        retainEvery: group.retainEvery ?? 0,
        retainDeliveries: group.retainDeliveries ?? 0,
        settings: group.flowLimit === undefined ? settings : { ...settings, flow: { limit: group.flowLimit, order: group.flowOrder ?? 'none' } },
        ...(tables ? { inbox: { url: postgresUrl, tables } } : {}),
      };
      fleet.add(slot, config);
    }
  }

  // Every process must be up before the first event: a run starting seconds late on a
  // loaded machine would let publishing and faults end before anyone consumes.
  const ready = Date.now() + 60_000;
  while (history.startedPids < fleet.slotNames.length && Date.now() < ready) await sleep(50);
  // Scheduled events: faults go on until the last of them is due, so moves meet them too.
  let faultsUntil = Date.now() + sizes.faultWindowMs;
  log(`${fleet.slotNames.length} poll processes up after ${Date.now() - startedAt} ms`);

  // Live checking: an atomic snapshot, then the ledgers, then the judgement.
  let lastSnapshot: Awaited<ReturnType<History['snapshot']>> | undefined;
  let unresolved = Number.POSITIVE_INFINITY;
  background.push(
    (async () => {
      while (!done) {
        try {
          // Scheduled events found in the stream become known entries before the snapshot.
          if (watch) await withTimeout(watch.scan(admin), SNAPSHOT_TIMEOUT_MS);
          const knownBefore = history.publishedCount;
          const snapshot = await withTimeout(history.snapshot(admin), SNAPSHOT_TIMEOUT_MS);
          history.judge(snapshot, knownBefore);
          lastSnapshot = snapshot;
          const unmoved = watch ? watch.scheduled - watch.moved : 0;
          if (!publishing) unresolved = history.settle(snapshot, false).unresolved + unmoved;
        } catch {
          // Redis down, failing over or stalled: the next snapshot will judge.
        }
        await sleep(rng.int(200, 500));
      }
    })(),
  );

  const ctx: FaultContext = {
    rng: rng.fork('faults'),
    fleet,
    history,
    server: topology.server,
    cluster: topology.cluster,
    proxy,
    stream,
    stopped: () => !publishing && Date.now() >= faultsUntil,
    fault: () => (faults += 1),
    log,
  };
  if (def.faults) background.push(def.faults(ctx).catch((error: unknown) => log(`fault loop failed: ${String(error)}`)));

  if (def.retention) {
    const retentionPort = portOf(topology.direct);
    const config = parseRetentionConfig({ stream, dltRetentionSeconds: 600, markerTtlSeconds: 600, reaper: { idleMs: 300 } });
    const retentionRng = rng.fork('retention');
    background.push(
      (async () => {
        while (!done) {
          const report = await runRetention(retentionPort, config).catch(() => undefined);
          faults += 1;
          trimmed += report?.stream.removed ?? 0;
          reaped += report?.consumers.deleted.length ?? 0;
          await sleep(retentionRng.int(50, 300));
        }
        await retentionPort.close();
      })(),
    );
  }

  await publish(def, sizes, rng.fork('publish'), history, admin, publishPort, stream, log, watch, maxDelayMs);
  faultsUntil = Math.max(faultsUntil, Date.now() + maxDelayMs);
  publishing = false;
  while (Date.now() < faultsUntil) await sleep(100);
  log(`published ${history.publishedCount} entries; waiting for the groups to drain`);

  const drainUntil = Date.now() + sizes.drainTimeoutMs;
  let lastReport = 0;
  while (Date.now() < drainUntil && unresolved > 0) {
    await sleep(250);
    if (process.env.CHAOS_DEBUG && Date.now() - lastReport > 1_000) {
      lastReport = Date.now();
      log(`unresolved ${unresolved}, faults ${faults}, runs ${history.runs}`);
    }
  }
  let waiting = 0;
  if (watch) {
    try {
      waiting = await persist('final schedule scan', () => watch.finish(admin, scheduleKeys(stream).due), 30_000);
    } catch (error) {
      history.violate('I8', 'final', `the stream and its schedule cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const knownBefore = history.publishedCount;
  let pending = 0;
  try {
    const final = await persist('final snapshot', () => history.snapshot(admin), 30_000);
    history.judge(final, knownBefore);
    pending = history.settle(final, true).pending;
  } catch (error) {
    // The stream or a group is gone (NOGROUP), or Redis never came back: nothing can be accounted for.
    history.violate('I1', 'final', `the final state cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    pending = lastSnapshot ? history.settle(lastSnapshot, false).pending : 0;
  }
  done = true;
  await fleet.stop();
  if (tables) {
    // After the processes are gone: the ledgers and the inbox no longer move.
    history.readLedgers();
    history.checkInbox(await readInbox(postgresUrl, tables, groupNames));
  }
  await Promise.all(background);
  // After the processes are gone: every handler interval is closed.
  const limits = new Map(def.groups.map((group) => [group.name, group.flowLimit ?? Number.POSITIVE_INFINITY]));
  for (const detail of flow.violations((group) => limits.get(group) ?? Number.POSITIVE_INFINITY)) history.violate('I9', detail, detail);
  if (def.flowKeys) {
    history.readLedgers();
    const keyed = keyedEntries(history, def.name, def.flowKeys);
    for (const group of def.groups.filter((g) => g.flowOrder === 'strict')) {
      const committed = history.commits.get(group.name)!;
      for (const detail of flow.orderViolations(group.name, keyed, (id) => committed.has(id))) history.violate('I10', detail, detail);
    }
  }
  const { committed, duplicates } = history.duplicates();
  return {
    scenario: def.name,
    title: def.title,
    seed,
    published: history.publishedCount,
    poison: [...history.known.values()].filter((e) => e.kind === 'dead-letter').length,
    groups: groupNames.length,
    committed,
    duplicates,
    duplicateRate: committed === 0 ? 0 : duplicates / committed,
    pending,
    dltRecords: history.dltRecords,
    violations: history.violationTotal,
    violationsByInvariant: { ...history.violationCounts },
    violationDetails: history.violations,
    worstOvershootMs: Number.isFinite(history.worstOvershootMs) ? history.worstOvershootMs : null,
    runs: history.runs,
    runErrors: history.runErrors,
    kills: fleet.kills,
    faults,
    ...(def.retention ? { trimmed, reaped } : {}),
    ...(watch ? { scheduled: { scheduled: watch.scheduled, moved: watch.moved, waiting, worstLatenessMs: watch.worstLatenessMs, meanLatenessMs: Math.round(watch.meanLatenessMs) } } : {}),
    forgottenDeliveries: history.forgottenDeliveries,
    lateAcksOfCommitted: history.lateAcksOfCommitted,
    ...(def.flowKeys ? { flow: { handlers: flow.handlers, pastLease: flow.pastLease, committedByGroup: Object.fromEntries(groupNames.map((g) => [g, history.commits.get(g)!.size])) } } : {}),
    snapshots: history.snapshots,
    durationMs: Date.now() - startedAt,
    replay: `npm run chaos -- --seed ${seed} --scenario ${def.name}`,
  };
}

/** The published entries with a flow key (event n has key `k<n mod flowKeys>`), in stream order. */
function keyedEntries(history: History, scenario: string, flowKeys: number): Array<{ id: string; key: string }> {
  const keyed: Array<{ id: string; key: string }> = [];
  for (const entry of history.known.values()) {
    const n = entry.kind === 'normal' && entry.eventId.startsWith(`${scenario}-`) ? Number(entry.eventId.slice(scenario.length + 1)) : Number.NaN;
    if (Number.isInteger(n)) keyed.push({ id: entry.id, key: `k${n % flowKeys}` });
  }
  return keyed.sort((a, b) => compareIds(a.id, b.id));
}

/** Publishes the normal events (signed, deduped, paced) and, for the poison scenario, the catalogue rounds between them. */
async function publish(
  def: ScenarioDefinition,
  sizes: Sizes,
  rng: Rng,
  history: History,
  admin: Admin,
  port: RedisPort,
  stream: string,
  log: (line: string) => void,
  watch: ScheduleWatch | undefined,
  maxDelayMs: number,
): Promise<void> {
  const publisher = createPublisher({
    port,
    routes: { [EVENT_TYPE]: stream },
    auth: { mode: 'hmac', keyId: HMAC_KEY.keyId, key: HMAC_KEY.secret, producer: PRODUCER },
    dedupeWindowSeconds: 600,
    timeoutMs: 2_000,
  });
  const poisonRounds = def.poison ? sizes.poisonRounds : 0;
  const poisonEvery = poisonRounds > 0 ? Math.ceil(sizes.events / poisonRounds) : Number.POSITIVE_INFINITY;
  let nextPoison = 0;
  const started = Date.now();
  for (let sent = 0; sent < sizes.events; ) {
    if (sent >= nextPoison * poisonEvery && nextPoison < poisonRounds) {
      for (const poison of poisonCatalogue(HMAC_KEY, stream, `${stream}:other`, `${def.name}-r${nextPoison}`, rng, sizes.bigPoison)) {
        const id = await persist('poison XADD', () => admin.xadd(stream, '*', ...poison.fields) as Promise<string>);
        history.add({ id, eventId: poison.eventId, kind: 'dead-letter', label: poison.label, reasons: poison.reasons, fields: poison.fields });
      }
      nextPoison += 1;
    }
    const batch: PublishEvent[] = [];
    const plans: Array<string[] | undefined> = [];
    for (let i = 0; i < PUBLISH_BATCH && sent + i < sizes.events; i += 1) {
      const n = sent + i;
      const plan = def.plan?.(rng, n);
      plans.push(plan);
      const delay = watch ? { delayMs: rng.int(0, maxDelayMs) } : {};
      const flowKey = def.flowKeys ? { flowKey: `k${n % def.flowKeys}` } : {};
      batch.push({ eventType: EVENT_TYPE, eventId: `${def.name}-${n}`, payload: JSON.stringify(plan ? { n, plan } : { n }), ...delay, ...flowKey });
    }
    const results = await persist('publish', () => publisher.publishBatch(batch), 120_000);
    for (const [i, result] of results.entries()) {
      const plan = plans[i];
      const label = plan ? `plan:${plan.join(',')}` : 'event';
      // Scheduled (a retried publish answers the original schedule): known once a move appends it.
      if (result.scheduled && watch) {
        watch.expect(result.eventId, result.scheduled.deliverAtMs);
        continue;
      }
      if (!plan?.includes('reject')) {
        history.add({ id: result.entryId, eventId: result.eventId, kind: 'normal', label });
        continue;
      }
      // A handler's Rejection: its evidence must be the entry exactly as the publisher wrote it.
      const [stored] = await persist('read entry', () => admin.xrangeBuffer(stream, result.entryId, result.entryId));
      history.add({ id: result.entryId, eventId: result.eventId, kind: 'dead-letter', label, reasons: ['chaos_rejected'], fields: stored![1] });
    }
    sent += batch.length;
    // Pace to the target rate, so faults land while the groups are consuming.
    const due = started + (sent / sizes.publishPerSecond) * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
    if (sent % 5_000 < PUBLISH_BATCH) log(`published ${sent}/${sizes.events}`);
  }
}

export { INVARIANTS };
