/**
 * Wake-up messages: after a publish, one message tells the wake-up consumers of the touched
 * streams to poll now instead of at their next cron tick. The same JSON body travels over
 * SQS and Cloudflare Queues: `{"streams": ["<stream>", ...]}`; an absent or empty list wakes
 * every wake-up consumer (a message sent by hand). A wake-up carries no entry — losing one
 * only delays delivery until the next scheduled poll. A scheduled event's wake-up is the
 * same message sent with the platform's delay, so it arrives at the event's due time.
 */
import type { DeploymentConfig } from './define-config';
import { wakeUpConsumers } from './jobs';

export interface WakeUpMessage {
  readonly streams: readonly string[];
}

/**
 * The message for a publish that touched `streams`, or undefined when no wake-up consumer
 * reads any of them (nothing to send). Streams are deduplicated and sorted.
 */
export function wakeUpMessageFor(config: DeploymentConfig, streams: readonly string[]): WakeUpMessage | undefined {
  const wanted = [...new Set(streams)].filter((stream) => wakeUpConsumers(config, stream).length > 0).sort();
  return wanted.length > 0 ? { streams: wanted } : undefined;
}

/** A received body (parsed JSON object, or its text), or undefined when it is not a wake-up. */
export function parseWakeUpMessage(body: unknown): WakeUpMessage | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const streams = (value as { streams?: unknown }).streams;
  if (streams === undefined) return { streams: [] };
  if (!Array.isArray(streams) || !streams.every((s): s is string => typeof s === 'string')) return undefined;
  return { streams };
}

/** Consumers to poll for these messages, each once, in config order. */
export function consumersToWake(config: DeploymentConfig, messages: readonly WakeUpMessage[]): string[] {
  if (messages.some((m) => m.streams.length === 0)) return wakeUpConsumers(config);
  const streams = new Set(messages.flatMap((m) => m.streams));
  return wakeUpConsumers(config).filter((name) => streams.has(config.consumers.get(name)!.config.stream));
}
