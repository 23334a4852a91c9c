/**
 * The benchmark's Redis profile (bench/redis-info.ts): per-entry figures from two
 * `INFO cpu commandstats` replies, in the shape redis-server 7 sends them (CRLF lines).
 */
import { describe, expect, it } from 'vitest';
import { parseInfo, redisFigures, sumCounters } from '../../bench/redis-info';

const reply = (cpuUser: string, cpuSys: string, commands: string[]) =>
  [
    '# CPU',
    `used_cpu_sys:${cpuSys}`,
    `used_cpu_user:${cpuUser}`,
    'used_cpu_sys_children:9.000000',
    'used_cpu_user_children:9.000000',
    `used_cpu_sys_main_thread:${cpuSys}`,
    `used_cpu_user_main_thread:${cpuUser}`,
    '',
    '# Commandstats',
    ...commands,
    '',
  ].join('\r\n');

const before = reply('1.500000', '0.250000', [
  'cmdstat_xreadgroup:calls=10,usec=400,usec_per_call=40.00,rejected_calls=0,failed_calls=0',
  'cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
  'cmdstat_client|setinfo:calls=2,usec=4,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
]);
const after = reply('1.530000', '0.260000', [
  'cmdstat_evalsha:calls=20,usec=1800,usec_per_call=90.00,rejected_calls=0,failed_calls=0',
  'cmdstat_xreadgroup:calls=30,usec=1400,usec_per_call=46.67,rejected_calls=0,failed_calls=0',
  'cmdstat_info:calls=5,usec=150,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
  'cmdstat_client|setinfo:calls=2,usec=4,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
]);

describe('bench Redis profile', () => {
  it('reads user + system CPU of the server itself (not its children) and every command counter, subcommands included', () => {
    const counters = parseInfo(before);
    expect(counters.cpuMicros).toBe(1_750_000);
    expect(counters.commands.get('xreadgroup')).toEqual({ calls: 10, usec: 400 });
    expect(counters.commands.get('client|setinfo')).toEqual({ calls: 2, usec: 4 });
    expect(counters.commands.size).toBe(3);
  });

  it('gives CPU and each command per entry between two snapshots, leaving out the measuring INFO and commands not called', () => {
    const figures = redisFigures(parseInfo(before), parseInfo(after), 2_000);
    expect(figures.cpuMicrosPerEntry).toBe(20); // 40,000 µs over 2,000 entries
    expect(figures.commands).toEqual({
      evalsha: { callsPer1k: 10, microsPerEntry: 0.9 },
      xreadgroup: { callsPer1k: 10, microsPerEntry: 0.5 },
    });
  });

  it('sums a Cluster’s masters into one server', () => {
    const sum = sumCounters([parseInfo(before), parseInfo(after)]);
    expect(sum.cpuMicros).toBe(1_750_000 + 1_790_000);
    expect(sum.commands.get('xreadgroup')).toEqual({ calls: 40, usec: 1_800 });
    expect(sum.commands.get('evalsha')).toEqual({ calls: 20, usec: 1_800 });
  });

  it('refuses a reply without the CPU section rather than reporting zero CPU', () => {
    expect(() => parseInfo('# Commandstats\r\ncmdstat_xack:calls=1,usec=2\r\n')).toThrow(/used_cpu_user/);
  });
});
