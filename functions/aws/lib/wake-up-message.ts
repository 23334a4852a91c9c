/**
 * Receiving the wake-up message a publish sends (src/http/wake-up.ts builds it; SQS here, a
 * Cloudflare Queue on Workers): `{"streams": ["…"]}` — the streams that received entries.
 * An empty or absent list wakes every wake-up consumer (e.g. a message sent by hand).
 */
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { wakeUpConsumers } from '../../../src/deployment/jobs';

export interface WakeUpMessage {
  readonly streams: readonly string[];
}

/** The message, or undefined when the body is not one (a poison wake-up). */
export function parseWakeUp(body: string): WakeUpMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const streams = (value as { streams?: unknown }).streams;
  if (streams === undefined) return { streams: [] };
  if (!Array.isArray(streams) || !streams.every((s) => typeof s === 'string')) return undefined;
  return { streams };
}

/** The consumers one message wakes, each named once. */
export function consumersToWake(config: DeploymentConfig, message: WakeUpMessage): string[] {
  if (message.streams.length === 0) return wakeUpConsumers(config);
  return [...new Set(message.streams.flatMap((stream) => wakeUpConsumers(config, stream)))];
}
