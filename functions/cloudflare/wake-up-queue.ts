/**
 * The publish API's wake-up sender over a Cloudflare Queue: used only when the deployment
 * config says `wakeUp: { kind: 'cloudflare-queue', binding }`. A declared binding missing
 * from the Worker's env is a deployment error, reported at start rather than ignored.
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { ConfigError } from '../../src/ground/errors';
import { wakeUpMessageFor } from '../../src/deployment/wake-up';
import type { QueueBinding, WorkerEnv } from './platform';

function isQueue(value: unknown): value is QueueBinding {
  return typeof value === 'object' && value !== null && typeof (value as QueueBinding).send === 'function';
}

export function queueWakeUp(config: DeploymentConfig, env: WorkerEnv): ((streams: readonly string[]) => Promise<void>) | undefined {
  const spec = config.wakeUpTarget('cloudflare-queue');
  if (!spec) return undefined;
  const queue = env[spec.binding];
  if (!isQueue(queue)) {
    throw new ConfigError('worker bindings', [{ path: 'wakeUp.binding', message: `no Queue producer binding named ${spec.binding} in the Worker env` }]);
  }
  return async (streams) => {
    const message = wakeUpMessageFor(config, streams);
    if (message) await queue.send(message, { contentType: 'json' });
  };
}
