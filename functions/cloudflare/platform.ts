/**
 * The slice of the Workers runtime API this Worker uses, typed structurally so the code
 * type-checks without the global `@cloudflare/workers-types` (which would clash with Node's
 * types in this repo) and tests can pass plain objects.
 */

/** `env`: secrets and vars are strings; bindings (queues, …) are objects. */
export type WorkerEnv = Readonly<Record<string, unknown>>;

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

export interface ScheduledController {
  /** The cron expression exactly as written in the wrangler config. */
  readonly cron: string;
  readonly scheduledTime: number;
  noRetry?(): void;
}

/** A Queue producer binding. */
export interface QueueBinding {
  send(body: unknown, options?: { contentType?: 'json' | 'text' | 'bytes' | 'v8'; delaySeconds?: number }): Promise<unknown>;
}

export interface QueueMessage {
  readonly id: string;
  readonly body: unknown;
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

export interface MessageBatch {
  readonly queue: string;
  readonly messages: readonly QueueMessage[];
}

/** The module-worker shape (`export default { fetch, scheduled, queue }`). */
export interface ModuleWorker {
  fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response>;
  scheduled(controller: ScheduledController, env: WorkerEnv, ctx: ExecutionContext): Promise<void>;
  queue(batch: MessageBatch, env: WorkerEnv, ctx: ExecutionContext): Promise<void>;
}

/** The string entries of `env`, i.e. what secrets and vars hold. */
export function secretEnvOf(env: WorkerEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
