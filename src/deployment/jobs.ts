/**
 * The jobs every platform entry point runs: poll one consumer, trim every stream, or
 * whatever a cron expression stands for. Each returns a value that the caller logs as one
 * JSON line (log.ts); none of them reads the platform directly.
 */
import { failedPollRunRecord, recordJobRun, recordPollRun, pollRunRecord, type PollTarget } from './run-history';
import { DEADLINE_OVERRUN_MS } from '../redis/deadline';
import { RedisCommandError } from '../ground/errors';
import type { RunReport } from '../consume/report';
import { runDeadline, type RunMode } from '../consume/run';
import { runRetention, type RetentionReport } from '../retention/run';
import type { DeploymentConfig } from './define-config';
import type { DeploymentRuntime } from './runtime';
import { relayOutbox, type RelayReport } from '../postgres/relay';
import { pruneTables, type PruneReport } from '../postgres/retention';

export type Job = { readonly kind: 'poll'; readonly consumer: string } | { readonly kind: 'trim' } | { readonly kind: 'relay' };

export interface PollJobOptions {
  /** Epoch ms by which the run must have settled (platform limit minus a reserve). */
  readonly deadline: number;
  /** Per-run Redis consumer name (e.g. from the request id); defaults to the configured one. */
  readonly consumerName?: string;
  readonly signal?: AbortSignal;
  /** Overrides the consumer's configured mode for this run (e.g. the CLI's `poll --mode`). */
  readonly mode?: RunMode;
}

export interface PollJobReport {
  readonly job: 'poll';
  readonly consumer: string;
  readonly stream: string;
  readonly group: string;
  readonly report: RunReport;
}

export interface TrimJobReport {
  readonly job: 'trim';
  readonly streams: ReadonlyArray<{ readonly name: string; readonly retention: RetentionReport }>;
}

export interface RelayJobReport {
  readonly job: 'relay';
  readonly relay: RelayReport;
  readonly pruned: PruneReport;
}

/** Relay time per run when the caller sets no deadline (a cron tick, a wake-up after commit). */
export const RELAY_BUDGET_MS = 10_000;

/**
 * The outbox relay (publishes committed rows through the runtime's signing publishers, as
 * each row's producer) and then the inbox/sent-outbox retention, bounded per run.
 */
export async function runRelayJob(runtime: DeploymentRuntime, options: { deadline?: number } = {}): Promise<RelayJobReport> {
  const settings = runtime.config.data.postgres;
  const { db, tables } = await runtime.postgres();
  const canSign = (producer: string) => runtime.config.routesFor(producer).length > 0;
  const relay = await relayOutbox(db, tables, (producer) => (canSign(producer) ? runtime.publisherFor(producer) : undefined), {
    batch: settings?.relay?.batch,
    deadline: options.deadline ?? runtime.now() + RELAY_BUDGET_MS,
    now: runtime.now,
    // Cancel rows (saga timeouts) cancel scheduled events where the publishers wrote them.
    port: runtime.port,
  });
  const pruned = await pruneTables(db, tables, {
    inboxRetentionSeconds: settings!.inboxRetentionSeconds,
    sentRetentionSeconds: settings!.sentRetentionSeconds,
  });
  if (runtime.history) {
    await recordJobRun(runtime, { t: runtime.now(), job: 'relay', level: relay.refused > 0 ? 'error' : 'info', published: relay.published });
  }
  return { job: 'relay', relay, pruned };
}

export async function runPollJob(runtime: DeploymentRuntime, consumer: string, options: PollJobOptions): Promise<PollJobReport> {
  const poller = runtime.poller(consumer, options.consumerName);
  const { config } = poller;
  // Refuse before any Redis command when too little time remains. A missing group is
  // created by the run itself on NOGROUP, under its deadline (SPEC §10: no command per run for it).
  runDeadline(config, options.deadline, runtime.now());
  const mode = options.mode ?? runtime.config.consumers.get(consumer)!.mode;
  const target: PollTarget = { consumer, stream: config.stream, group: config.group, dlt: config.keys.dlt };
  // The record gets what a settle gets past the deadline, no more.
  const recordLimitMs = () => options.deadline + DEADLINE_OVERRUN_MS - runtime.now();
  let report: RunReport;
  try {
    report = await poller.run({ mode, deadline: options.deadline, signal: options.signal });
  } catch (error) {
    // A run Redis refused is listed as failed (a consumer failing every run must not look
    // idle); one that could not reach Redis records nothing — the write would fail the same way.
    if (runtime.history && error instanceof RedisCommandError) {
      await recordPollRun(runtime, target, failedPollRunRecord(target, error.replyCode || error.code, runtime.now()), recordLimitMs());
    }
    throw error;
  }
  if (runtime.history) await recordPollRun(runtime, target, pollRunRecord(target, report, runtime.now()), recordLimitMs());
  return { job: 'poll', consumer, stream: config.stream, group: config.group, report };
}

export async function runTrimJob(runtime: DeploymentRuntime): Promise<TrimJobReport> {
  const streams = await Promise.all(
    runtime.retention().map(async (config) => ({ name: config.stream, retention: await runRetention(runtime.port, config) })),
  );
  if (runtime.history) {
    const sum = (count: (retention: RetentionReport) => number) => streams.reduce((total, s) => total + count(s.retention), 0);
    await recordJobRun(runtime, {
      t: runtime.now(),
      job: 'trim',
      level: 'info',
      removed: sum((r) => r.stream.removed),
      deadLettersRemoved: sum((r) => r.deadLetters.removed),
      reaped: sum((r) => r.consumers.deleted.length),
      scheduledMoved: sum((r) => r.schedule.moved),
    });
  }
  return { job: 'trim', streams };
}

/** Consumers that poll when a wake-up arrives for `stream` (or for any stream when omitted). */
export function wakeUpConsumers(config: DeploymentConfig, stream?: string): string[] {
  return [...config.consumers.values()]
    .filter((plan) => plan.wakeUp && (stream === undefined || plan.config.stream === stream))
    .map((plan) => plan.name);
}
