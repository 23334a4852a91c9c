/**
 * Which streams the dashboard reads: every stream the deployment declares, with its key
 * names (DLT, marker prefix, dedupe prefix) derived the way its consumers and publishers
 * derive them — so a lookup finds exactly the keys the transport wrote.
 */
import type { ConsumerConfig } from '../../consume/config';
import type { DeploymentConfig } from '../../deployment/define-config';
import { deriveStreamKeys, type StreamKeys } from '../../entry/keys';

export interface DeclaredStream {
  readonly stream: string;
  readonly keys: StreamKeys;
  /** A consumer config of this stream (what redrive takes); undefined when nothing consumes it. */
  readonly consumer: ConsumerConfig | undefined;
}

export function declaredStreams(config: DeploymentConfig): DeclaredStream[] {
  const consumers = new Map<string, ConsumerConfig>();
  for (const plan of config.consumers.values()) if (!consumers.has(plan.config.stream)) consumers.set(plan.config.stream, plan.config);
  return Object.entries(config.data.streams).map(([stream, spec]) => {
    const consumer = consumers.get(stream);
    // The cursor key is per group and unused here; every other key is the same for all groups.
    return { stream, keys: consumer?.keys ?? deriveStreamKeys(stream, '', spec.keys), consumer };
  });
}

/** The consumed streams: the only ones with dead letters (a stream nobody reads has no DLT). */
export function consumedStreams(config: DeploymentConfig): Array<DeclaredStream & { readonly consumer: ConsumerConfig }> {
  return declaredStreams(config).filter((s): s is DeclaredStream & { consumer: ConsumerConfig } => s.consumer !== undefined);
}
