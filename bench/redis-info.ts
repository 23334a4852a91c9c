/**
 * Parsing Redis `INFO cpu commandstats` replies and turning two of them into per-entry
 * figures. Pure, so the arithmetic is tested without a server (test/bench/redis-info.test.ts);
 * bench/redis-meter.ts does the asking.
 */
import type { RedisFigures } from './scenarios/types';

export interface CommandCounter {
  readonly calls: number;
  readonly usec: number;
}

/** Cumulative counters of one server, or of several summed. */
export interface ServerCounters {
  /** used_cpu_user + used_cpu_sys, µs. */
  readonly cpuMicros: number;
  readonly commands: ReadonlyMap<string, CommandCounter>;
}

/** Commands the measuring itself sends, left out of a run's figures. */
const MEASURING_COMMANDS = new Set(['info']);

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([0-9.]+)\\r?$`, 'm').exec(info);
  if (!match) throw new Error(`INFO reply has no ${name} line`);
  return Number(match[1]);
}

/** `cmdstat_xack:calls=3,usec=12,usec_per_call=4.00,rejected_calls=0,failed_calls=0` → xack {3, 12}. */
function commandsOf(info: string): Map<string, CommandCounter> {
  const commands = new Map<string, CommandCounter>();
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):(.*?)\r?$/.exec(line);
    if (!match) continue;
    const values = new Map(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]));
    commands.set(match[1]!, { calls: Number(values.get('calls') ?? 0), usec: Number(values.get('usec') ?? 0) });
  }
  return commands;
}

/** Parses one server's reply to `INFO cpu commandstats`. */
export function parseInfo(info: string): ServerCounters {
  // Seconds with six decimals: round to whole µs so float noise does not show as CPU.
  const cpuMicros = Math.round((field(info, 'used_cpu_user') + field(info, 'used_cpu_sys')) * 1e6);
  return { cpuMicros, commands: commandsOf(info) };
}

/** The counters of several servers (a Cluster's masters) as one. */
export function sumCounters(servers: readonly ServerCounters[]): ServerCounters {
  const commands = new Map<string, CommandCounter>();
  for (const server of servers) {
    for (const [name, c] of server.commands) {
      const sum = commands.get(name) ?? { calls: 0, usec: 0 };
      commands.set(name, { calls: sum.calls + c.calls, usec: sum.usec + c.usec });
    }
  }
  return { cpuMicros: servers.reduce((sum, s) => sum + s.cpuMicros, 0), commands };
}

/** What happened between two snapshots, per entry; commands that were not called are left out. */
export function redisFigures(before: ServerCounters, after: ServerCounters, entries: number): RedisFigures {
  const per = (x: number) => (entries > 0 ? x / entries : Number.NaN);
  const commands: Record<string, { callsPer1k: number; microsPerEntry: number }> = {};
  for (const [name, now] of after.commands) {
    if (MEASURING_COMMANDS.has(name)) continue;
    const then = before.commands.get(name) ?? { calls: 0, usec: 0 };
    if (now.calls === then.calls) continue;
    commands[name] = { callsPer1k: per((now.calls - then.calls) * 1000), microsPerEntry: per(now.usec - then.usec) };
  }
  return { cpuMicrosPerEntry: per(after.cpuMicros - before.cpuMicros), commands };
}
