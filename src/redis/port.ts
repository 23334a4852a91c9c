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
  /**
   * A connection of its own for blocking reads (TCP clients only; SPEC §5.1 "Blocking
   * reads"): a blocking command on the shared connection would hold up every other command
   * of the process (other consumers, publishes) for its whole wait. Created on first use and
   * closed with the port. Absent where blocking is impossible (REST).
   */
  readonly blockingReader?: () => BlockingReader;
  close(): Promise<void>;
}

export interface BlockingReader {
  /**
   * Sends one blocking command and returns its reply (a RedisCommandError for an error
   * reply). An abort of `signal` ends the wait at once: the command then answers as if its
   * wait had run out, or with what it had already taken.
   */
  read(cmd: RedisCommand, signal?: AbortSignal): Promise<RedisReply | RedisCommandError>;
}

/**
 * The reply of EXEC: one slot per queued command, an error reply in its slot as a
 * RedisCommandError (like the slots of an exchange); null when the transaction was discarded.
 */
export type TransactionReply = Array<RedisReply | RedisCommandError> | null;

export function command(name: string, ...args: RedisArg[]): RedisCommand {
  return { name, args };
}
