/**
 * The publish API's wake-up sender over a Cloudflare Queue: used only when the deployment
 * config says `wakeUp: { kind: 'cloudflare-queue', binding }`. A declared binding missing
 * from the Worker's env is a deployment error, reported at start rather than ignored. A
 * scheduled event's wake-up is sent with `delaySeconds` (SPEC §5.6).
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { ConfigError } from '../../src/ground/errors';
import { wakeUpMessageFor } from '../../src/deployment/wake-up';
import { QUEUES_MAX_DELAY_SECONDS, wakeUpDelaySeconds, type WakeUpSender } from '../../src/deployment/wake-up-plan';
import type { QueueBinding, WorkerEnv } from './platform';

function isQueue(value: unknown): value is QueueBinding {
  return typeof value === 'object' && value !== null && typeof (value as QueueBinding).send === 'function';
}

export function queueWakeUp(config: DeploymentConfig, env: WorkerEnv): WakeUpSender | undefined {
  const spec = config.wakeUpTarget('cloudflare-queue');
  if (!spec) return undefined;
  const queue = env[spec.binding];
  if (!isQueue(queue)) {
    throw new ConfigError('worker bindings', [{ path: 'wakeUp.binding', message: `no Queue producer binding named ${spec.binding} in the Worker env` }]);
  }
  return async (streams, delayMs) => {
    const message = wakeUpMessageFor(config, streams);
    if (!message) return;
    // A scheduled event's wake-up arrives at its due time (rounded up to whole seconds), or —
    // past the Queues' 12-hour bound — is not sent: the cron run moves the event then.
    const delaySeconds = delayMs === undefined ? 0 : wakeUpDelaySeconds(delayMs, QUEUES_MAX_DELAY_SECONDS);
    if (delaySeconds === undefined) return;
    await queue.send(message, delaySeconds > 0 ? { contentType: 'json', delaySeconds } : { contentType: 'json' });
  };
}
