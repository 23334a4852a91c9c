/**
 * The Cloudflare Worker of a deployment (SPEC §11): `fetch` serves the publish API,
 * `scheduled` runs the poll and trim jobs of the cron expression that fired, `queue` polls
 * the wake-up consumers of the streams named in wake-up messages. Redis is reached over
 * REST (Upstash); the Worker's env bindings are the secrets. Runtime and app are built once
 * per env object, i.e. once per isolate in practice.
 *
 * @example
 * // worker.ts
 * export default createWorker(config);
 */
import type { Hono } from 'hono';
import { connectRest } from '../../src/deployment/connect-rest';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { logBacklogs } from '../../src/deployment/backlog-job';
import { jobsForCron } from '../../src/deployment/cron-jobs';
import { formatLogLine, type LogLevel } from '../../src/deployment/log-line';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import type { SqlDatabase } from '../../src/postgres/sql';
import { problemResponse } from '../../src/web/problems';
import { consumersToWake, parseWakeUpMessage, type WakeUpMessage } from '../../src/deployment/wake-up';
import { deadlineWithin, QUEUE_LIMIT_MS, SCHEDULED_LIMIT_MS } from './budget';
import { secretEnvOf, type MessageBatch, type ModuleWorker, type QueueMessage, type WorkerEnv } from './platform';
import { runJobs, throwIfAnyFailed } from './run-jobs';
import { queueWakeUp } from './wake-up-queue';

export interface WorkerOptions {
  /** Where JSON log lines go (default: console.log, i.e. Workers Logs). */
  readonly log?: (line: string) => void;
  readonly now?: () => number;
  /**
   * Opens the deployment's Postgres for this env (e.g. node-postgres through a Hyperdrive
   * binding, with `nodejs_compat`). None by default: handlers and the relay job then fail
   * with DB_NOT_CONFIGURED.
   */
  readonly database?: (env: WorkerEnv) => Promise<SqlDatabase>;
}

interface WorkerState {
  readonly runtime: DeploymentRuntime;
  app(): Hono;
}

export function createWorker(config: DeploymentConfig, options: WorkerOptions = {}): ModuleWorker {
  const log = options.log ?? ((line: string) => console.log(line));
  const now = options.now ?? Date.now;
  const states = new WeakMap<WorkerEnv, WorkerState>();
  const logLine = (level: LogLevel, msg: string, fields: { error?: unknown; detail?: Record<string, unknown> }) =>
    log(formatLogLine({ level, msg, deployment: config.name, timestamp: now(), ...fields }));

  const stateFor = (env: WorkerEnv): WorkerState => {
    const cached = states.get(env);
    if (cached) return cached;
    const secrets = secretEnvOf(env);
    // The runtime's publishers send the wake-ups — the publish API's and the handlers'
    // follow-up events alike — so the app itself needs none. A missing Queue binding costs
    // only latency (steps wait for the next cron tick): log it, and keep polling.
    let wakeUp: ReturnType<typeof queueWakeUp>;
    try {
      wakeUp = queueWakeUp(config, env);
    } catch (error) {
      logLine('warn', 'wake-ups disabled', { error });
    }
    const database = options.database ? () => options.database!(env) : undefined;
    const runtime = createRuntime(config, { port: connectRest(config, secrets), env: secrets, now: options.now, wakeUp, log, database });
    let app: Hono | undefined;
    const state: WorkerState = {
      runtime,
      app: () => (app ??= createPublishApp({ runtime, env: secrets, now, log })),
    };
    states.set(env, state);
    return state;
  };

  /** Scheduled and queue runs cannot answer a problem response: log why, then fail the invocation. */
  const runtimeFor = (env: WorkerEnv): DeploymentRuntime => {
    try {
      return stateFor(env).runtime;
    } catch (error) {
      logLine('error', 'worker misconfigured', { error });
      throw error;
    }
  };

  /** Each valid wake-up is acked when every consumer it woke polled, else retried (as on Lambda). */
  const settleMessages = (valid: Array<{ message: QueueMessage; wake: WakeUpMessage }>, failed: ReadonlySet<string>) => {
    for (const { message, wake } of valid) {
      if (consumersToWake(config, [wake]).some((consumer) => failed.has(consumer))) message.retry();
      else message.ack();
    }
  };

  return {
    async fetch(request, env, ctx) {
      let app: Hono;
      try {
        app = stateFor(env).app();
      } catch (error) {
        logLine('error', 'worker misconfigured', { error });
        return problemResponse('server_misconfigured', 'the Worker is missing configuration; see its logs');
      }
      return app.fetch(request, env, ctx as Parameters<Hono['fetch']>[2]);
    },

    async scheduled(controller, env) {
      const jobs = jobsForCron(config, controller.cron);
      if (jobs.length === 0) {
        logLine('warn', 'no job is scheduled on this cron expression', { detail: { cron: controller.cron } });
        return;
      }
      const deadline = deadlineWithin(SCHEDULED_LIMIT_MS, now());
      const runtime = runtimeFor(env);
      const outcomes = await runJobs(runtime, jobs, { deadline, log, now });
      // After the trim, as on AWS: one `backlog` line per consumer, what a log alert filters on.
      if (jobs.some((job) => job.kind === 'trim')) await logBacklogs(runtime, { log, now });
      throwIfAnyFailed(outcomes);
    },

    async queue(batch: MessageBatch, env) {
      const valid: Array<{ message: QueueMessage; wake: WakeUpMessage }> = [];
      for (const message of batch.messages) {
        const wake = parseWakeUpMessage(message.body);
        if (wake) valid.push({ message, wake });
        else {
          // Retrying cannot repair a malformed message; the next cron tick polls anyway.
          logLine('warn', 'dropped a message that is not a wake-up', { detail: { queue: batch.queue, id: message.id } });
          message.ack();
        }
      }
      const consumers = consumersToWake(config, valid.map((v) => v.wake));
      if (consumers.length === 0) return settleMessages(valid, new Set());
      const deadline = deadlineWithin(QUEUE_LIMIT_MS, now());
      const outcomes = await runJobs(runtimeFor(env), consumers.map((consumer) => ({ kind: 'poll', consumer })), { deadline, log, now });
      const failed = new Set(outcomes.flatMap((o) => (o.ok || o.job.kind !== 'poll' ? [] : [o.job.consumer])));
      settleMessages(valid, failed);
    },
  };
}
