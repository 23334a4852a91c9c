/**
 * `saga-streams/cloudflare`: the Worker of a deployment, built from the user's config.
 *
 * @example
 * // src/worker.ts (wrangler `main`)
 * import config from './saga';
 * export default createWorker(config);
 */
export { createWorker } from './create-worker';
export type { WorkerOptions } from './create-worker';
export type { ModuleWorker, WorkerEnv, ScheduledController, QueueBinding, QueueMessage, MessageBatch, ExecutionContext } from './platform';
export { wranglerToml } from './wrangler-toml';
export type { WranglerTomlOptions } from './wrangler-toml';
