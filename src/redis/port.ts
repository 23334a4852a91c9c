/**
 * The Redis port: the one seam between the transport and a Redis client. Everything the
 * product does to Redis is a list of commands sent in one round trip. Two implementations
 * exist (ioredis over TCP, the Upstash REST protocol over fetch); the script fallback,
 * metering and reply decoding are written once on top of this interface.
 */
import type { RedisCommandError } from '../ground/errors';

export type RedisArg = string | number | Uint8Array;

/**
 * A decoded reply. Bulk and status strings arrive as bytes so payloads survive
 * byte-for-byte; integers as numbers; nil as null.
 */
export type RedisReply = null | number | Uint8Array | RedisReply[];

export interface RedisCommand {
  readonly name: string;
  readonly args: readonly RedisArg[];
}

export type Transport = 'tcp' | 'rest';

/**
 * Longest wait for one exchange's replies before it counts as Redis being unreachable. A
 * half-open connection or a stalled HTTP request otherwise hangs a run past its deadline,
 * and the platform's kill would lose the run's report. A blocking read (TCP only) gets its
 * BLOCK time on top.
 */
export const EXCHANGE_TIMEOUT_MS = 10_000;

export interface RedisPort {
  readonly transport: Transport;
  /** True when keys are spread over Redis Cluster slots: every script's keys must share one. */
  readonly cluster: boolean;
  /**
   * Sends the commands in one round trip and returns their replies in order. A command
   * Redis refused yields a RedisCommandError in its slot (the others still count); a
   * broken connection rejects the whole call with RedisUnavailableError.
   */
  exchange(commands: readonly RedisCommand[]): Promise<Array<RedisReply | RedisCommandError>>;
  close(): Promise<void>;
}

export function command(name: string, ...args: RedisArg[]): RedisCommand {
  return { name, args };
}
