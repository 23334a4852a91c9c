/**
 * The dashboard's history in Redis (issue 17 §1): what the poll functions leave behind at the
 * end of their runs, since a Lambda or a Worker remembers nothing between runs — one
 * oldest-pending-age sample per consumer and bucket, and the recent run records. Written only
 * when the deployment enables the dashboard; one script call (ops-record.lua) after the run's
 * last settle, never inside its rounds.
 *
 * An idle run costs one command (its claim, SPEC §10), so it is not recorded every time: a
 * run that did something (or failed) always is, an idle one only when this process recorded
 * nothing for the same consumer (or job) within `publishApi.dashboard.idleRecordSeconds`.
 * The newest record of a consumer therefore tells the dashboard its poller was alive then:
 * a live poller is never "last seen" longer ago than that interval plus its schedule's period.
 * Kept free of Hono and of the dashboard's pages: every poll function bundle carries this file.
 */
import { describeThrown } from '../ground/errors';
import { opsRecordScript } from '../generated/lua-scripts';
import { runOperations, type ScriptCall } from '../redis/script';
import type { RunReport } from '../consume/report';
import { withTimeLimit } from '../ground/time-limit';
import type { DeploymentRuntime } from './runtime';
import { IDLE_RECORD_SECONDS } from './schema';

/** Bucket width of the age samples: at most one sample per consumer per 20 s. */
export const SAMPLE_BUCKET_MS = 20_000;
/** Samples kept per consumer: 2 h at full density, 6 h when polled once a minute. */
export const SAMPLES_KEPT = 360;
/**
 * Run records kept per consumer. Idle runs (nothing handled) have a list of their own, so a
 * quiet hour of cron ticks never pushes the runs that did something out of view.
 */
export const ACTIVE_RUNS_KEPT = 50;
export const IDLE_RUNS_KEPT = 10;
/** Trim and relay runs of the deployment (one list: they are few). */
export const JOB_RUNS_KEPT = 30;
/** Longest wait for the record after the run: it must never hold a function past its limit. */
const RECORD_LIMIT_MS = 1_000;


/** Keys of one consumer's history: derived from the stream, so they share its Cluster slot. */
export function historyKeys(stream: string, group: string) {
  return {
    samples: `${stream}:ops:samples:${group}`,
    runs: `${stream}:ops:runs:${group}`,
    idleRuns: `${stream}:ops:idle-runs:${group}`,
  };
}

/** The trim and relay runs of a deployment. */
export function jobRunsKey(deployment: string): string {
  return `saga-streams:ops:${deployment}:runs`;
}

/** One recorded run, as the dashboard lists it (a compact form of the run's log line). */
export interface RunRecord {
  readonly t: number;
  readonly job: 'poll' | 'trim' | 'relay';
  readonly level: 'info' | 'warn' | 'error';
  readonly consumer?: string;
  readonly acked?: number;
  readonly deadLettered?: number;
  readonly retained?: number;
  readonly handled?: number;
  readonly reclaimed?: number;
  readonly rounds?: number;
  readonly durationMs?: number;
  readonly stoppedForDeadline?: boolean;
  /** Trim: entries removed; relay: rows published. */
  readonly removed?: number;
  readonly published?: number;
  /** Trim: dead-letter records past their retention removed, and empty consumers reaped. */
  readonly deadLettersRemoved?: number;
  readonly reaped?: number;
  /** Trim: due scheduled events it moved into their streams. */
  readonly scheduledMoved?: number;
  /** A failed run's error code. */
  readonly error?: string;
}

export interface PollTarget {
  readonly consumer: string;
  readonly stream: string;
  readonly group: string;
  readonly dlt: string;
}

/** A run that did nothing: listed apart, after the runs that did something. */
export function isIdleRun(run: RunRecord): boolean {
  return (
    run.level === 'info' &&
    !run.handled &&
    !run.reclaimed &&
    !run.deadLettered &&
    !run.retained &&
    !run.removed &&
    !run.published &&
    !run.deadLettersRemoved &&
    !run.reaped &&
    !run.scheduledMoved
  );
}

/** The counters of a poll run its record keeps. */
const RECORDED = ['acked', 'deadLettered', 'retained', 'handled', 'reclaimed', 'scheduledMoved', 'rounds', 'durationMs', 'stoppedForDeadline'] as const;

export function pollRunRecord(target: PollTarget, report: RunReport, t: number): RunRecord {
  // The level of the run's log line (deployment/log.ts): deleted pending entries, contract errors and lost flow leases warn.
  const level = report.deletedPending > 0 || report.handlerContractErrors > 0 || report.flowLeaseLost > 0 ? 'warn' : 'info';
  const record: Record<string, unknown> = { t, job: 'poll', level, consumer: target.consumer };
  for (const field of RECORDED) record[field] = report[field];
  return record as unknown as RunRecord;
}

/** A poll run that Redis refused (NOGROUP, NOPERM, WRONGTYPE…): listed as an error run with that code. */
export function failedPollRunRecord(target: PollTarget, code: string, t: number): RunRecord {
  return { t, job: 'poll', level: 'error', consumer: target.consumer, error: code };
}

/**
 * When each process last recorded a run of each consumer or job (by runtime: one per warm
 * container or isolate), so that an idle run can skip its record.
 */
const lastRecorded = new WeakMap<DeploymentRuntime, Map<string, number>>();

/** True when `run` is to be written: it did something, or nothing of `subject` was recorded here within the interval. */
function isDue(runtime: DeploymentRuntime, subject: string, run: RunRecord): boolean {
  if (!isIdleRun(run)) return true;
  const last = lastRecorded.get(runtime)?.get(subject);
  const intervalMs = (runtime.config.data.publishApi?.dashboard?.idleRecordSeconds ?? IDLE_RECORD_SECONDS) * 1000;
  return last === undefined || runtime.now() - last >= intervalMs;
}

function remember(runtime: DeploymentRuntime, subject: string): void {
  let seen = lastRecorded.get(runtime);
  if (seen === undefined) lastRecorded.set(runtime, (seen = new Map()));
  seen.set(subject, runtime.now());
}

/**
 * Writes `run` when due (isDue), at most `limitMs`; a failure costs one log line and nothing
 * else, and leaves the next run due (an idle one retries the record).
 */
async function record(runtime: DeploymentRuntime, subject: string, run: RunRecord, what: Record<string, unknown>, limitMs: number, call: ScriptCall): Promise<void> {
  if (limitMs <= 0 || !isDue(runtime, subject, run)) return;
  try {
    await withTimeLimit(runOperations(runtime.port, [call]), Math.min(limitMs, RECORD_LIMIT_MS));
    remember(runtime, subject);
  } catch (error) {
    // The shape of every run line: context fields, then `error` as {name, code?, message}.
    const line = { level: 'warn', msg: 'dashboard history not recorded', deployment: runtime.config.name, ...what, timestamp: runtime.now(), error: describeThrown(error) };
    runtime.log(JSON.stringify(line));
  }
}

/** The consumer's age sample and its run record, in one script call. `limitMs`: time the caller can spare. */
export function recordPollRun(runtime: DeploymentRuntime, target: PollTarget, run: RunRecord, limitMs: number): Promise<void> {
  const keys = historyKeys(target.stream, target.group);
  const idle = isIdleRun(run);
  const subject = `poll\u0000${target.consumer}\u0000${target.stream}\u0000${target.group}`;
  return record(runtime, subject, run, { job: 'poll', consumer: target.consumer }, limitMs, {
    script: opsRecordScript,
    keys: [idle ? keys.idleRuns : keys.runs, target.stream, target.dlt, keys.samples],
    args: [JSON.stringify(run), idle ? IDLE_RUNS_KEPT : ACTIVE_RUNS_KEPT, target.group, SAMPLE_BUCKET_MS, SAMPLES_KEPT, run.acked ?? 0],
  });
}

/** A trim or relay run, in the deployment's list: one script call. */
export function recordJobRun(runtime: DeploymentRuntime, run: RunRecord): Promise<void> {
  return record(runtime, `job\u0000${run.job}`, run, { job: run.job }, RECORD_LIMIT_MS, {
    script: opsRecordScript,
    keys: [jobRunsKey(runtime.config.name)],
    args: [JSON.stringify(run), JOB_RUNS_KEPT],
  });
}
