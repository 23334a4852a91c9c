/**
 * Durability on request (SPEC §6.1): after a write, wait until it reached the primary's AOF
 * and/or the AOF of N replicas (`WAITAOF numlocal numreplicas timeout`) and/or N replicas'
 * memory (`WAIT numreplicas timeout`) before success is reported. Neither command may run
 * inside a script, so they go right after the write, in the same round trip; both wait for
 * this connection's last write, so they cover everything sent before them.
 *
 * Refused, never ignored, where it cannot be given: over REST (Upstash has no WAIT) at
 * construction, on a server without WAITAOF (Redis 7.0) or without AOF when the primary's AOF
 * is asked for, at start-up or on first use (capabilities.ts) — a ConfigError naming the option.
 */
import * as z from 'zod/mini';
import { ConfigError, RedisCommandError, type ConfigProblem } from '../ground/errors';
import { describeServer, serverCapabilities } from './capabilities';
import { command, type RedisCommand, type RedisPort, type RedisReply, type Transport } from './port';

/** Replicas a wait may ask for: more than any real deployment has. */
export const MAX_DURABLE_REPLICAS = 32;
/** Default longest wait of one WAIT/WAITAOF. appendfsync everysec fsyncs about once a second. */
export const DEFAULT_DURABILITY_TIMEOUT_MS = 1_500;

/** The `durability` option of a publisher and of a consumer's settle. */
export const durabilitySchema = z
  .strictObject({
    /** WAITAOF numlocal 1: the primary fsynced the write to its AOF (needs `appendonly yes`). */
    primaryAof: z._default(z.boolean(), false),
    /** WAITAOF numreplicas: this many replicas fsynced the write to their AOF. */
    replicaAof: z._default(z.int().check(z.minimum(0), z.maximum(MAX_DURABLE_REPLICAS)), 0),
    /** WAIT numreplicas: this many replicas received the write (in memory, not necessarily on disk). */
    replicas: z._default(z.int().check(z.minimum(0), z.maximum(MAX_DURABLE_REPLICAS)), 0),
    /** Longest wait of each command; reaching it short of the counts is a failure (publish) or an unconfirmed settle. */
    timeoutMs: z._default(z.int().check(z.minimum(1), z.maximum(60_000)), DEFAULT_DURABILITY_TIMEOUT_MS),
  })
  .check(
    z.refine((d) => d.primaryAof || d.replicaAof > 0 || d.replicas > 0, 'asks for nothing: set primaryAof, replicaAof or replicas (or leave durability out)'),
  );

export type DurabilityInput = z.input<typeof durabilitySchema>;
export type Durability = z.output<typeof durabilitySchema>;

function usesWaitAof(durability: Durability): boolean {
  return durability.primaryAof || durability.replicaAof > 0;
}

/** True when the server must be asked whether it can give this (WAITAOF is involved; WAIT exists everywhere). */
export function durabilityNeedsServer(durability: Durability): boolean {
  return usesWaitAof(durability);
}

/** WAIT is needed only for replicas beyond those WAITAOF already waits for (an fsync implies receipt). */
function usesWait(durability: Durability): boolean {
  return durability.replicas > durability.replicaAof;
}

/** The commands to send right after the write, in order. */
export function durabilityCommands(durability: Durability): RedisCommand[] {
  const commands: RedisCommand[] = [];
  if (usesWaitAof(durability)) commands.push(command('WAITAOF', durability.primaryAof ? 1 : 0, durability.replicaAof, durability.timeoutMs));
  if (usesWait(durability)) commands.push(command('WAIT', durability.replicas, durability.timeoutMs));
  return commands;
}

/** Longest the commands may wait in all: each has its own timeout. */
export function durabilityWaitMs(durability: Durability): number {
  return durabilityCommands(durability).length * durability.timeoutMs;
}

export interface DurabilityOutcome {
  readonly confirmed: boolean;
  /** What was confirmed, or what fell short, e.g. `WAITAOF: primary AOF 1/1, replica AOFs 0/1 within 1500 ms`. */
  readonly detail: string;
}

/** Reads the replies of durabilityCommands (same order): confirmed only when every count was reached. */
export function durabilityOutcome(durability: Durability, replies: ReadonlyArray<RedisReply | RedisCommandError | undefined>): DurabilityOutcome {
  const parts: string[] = [];
  let confirmed = true;
  let slot = 0;
  const within = `within ${durability.timeoutMs} ms`;
  if (usesWaitAof(durability)) {
    const reply = replies[slot++];
    const [local, remote] = Array.isArray(reply) ? reply.map((n) => (typeof n === 'number' ? n : -1)) : [];
    if (local === undefined || remote === undefined || local < 0 || remote < 0) {
      confirmed = false;
      parts.push(`WAITAOF ${failureOf(reply)}`);
    } else {
      const wantLocal = durability.primaryAof ? 1 : 0;
      if (local < wantLocal || remote < durability.replicaAof) confirmed = false;
      parts.push(`WAITAOF: primary AOF ${Math.min(local, 1)}/${wantLocal}, replica AOFs ${remote}/${durability.replicaAof} ${within}`);
    }
  }
  if (usesWait(durability)) {
    const reply = replies[slot++];
    if (typeof reply !== 'number') {
      confirmed = false;
      parts.push(`WAIT ${failureOf(reply)}`);
    } else {
      if (reply < durability.replicas) confirmed = false;
      parts.push(`WAIT: replicas ${reply}/${durability.replicas} ${within}`);
    }
  }
  return { confirmed, detail: parts.join('; ') };
}

function failureOf(reply: RedisReply | RedisCommandError | undefined): string {
  if (reply instanceof RedisCommandError) return `refused: ${reply.reply}`;
  return reply === undefined ? 'not answered' : 'answered unexpectedly';
}

/** Problems of a durability option on a transport: REST (Upstash) has no WAIT or WAITAOF. */
export function durabilityTransportProblems(durability: Durability | undefined, transport: Transport, path: string): ConfigProblem[] {
  if (durability === undefined || transport === 'tcp') return [];
  return [
    {
      path,
      message: `cannot be given over the ${transport} client: Upstash's REST API has no WAIT or WAITAOF (publish or settle over TCP, or leave durability out)`,
    },
  ];
}

/**
 * Refuses a durability option the server behind `port` cannot give (a ConfigError naming
 * `path`): WAITAOF missing (Redis 7.0), or the primary's AOF asked for while `appendonly` is
 * off. Asks the server only when WAITAOF is involved (WAIT exists everywhere), once per port.
 */
export async function checkDurabilitySupport(port: RedisPort, durability: Durability | undefined, path: string, subject: string, via?: RedisPort): Promise<void> {
  if (durability === undefined || !usesWaitAof(durability)) return;
  const server = await serverCapabilities(port, { via });
  const problems: ConfigProblem[] = [];
  if (!server.waitAof) {
    const field = durability.primaryAof ? `${path}.primaryAof` : `${path}.replicaAof`;
    problems.push({
      path: field,
      message: `needs WAITAOF, which this server (${describeServer(server)}) does not have: Redis ≥ 7.2 or Valkey has it; here only ${path}.replicas (WAIT: replicas received it, not fsynced) can be given`,
    });
  } else if (durability.primaryAof && !server.aofEnabled) {
    problems.push({ path: `${path}.primaryAof`, message: `needs the server's AOF on (appendonly yes); this server (${describeServer(server)}) runs without it` });
  }
  if (problems.length > 0) throw new ConfigError(subject, problems);
}
