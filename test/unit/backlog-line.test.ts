/**
 * The backlog log line with flow control (SPEC §5.7): a key closed behind its head past
 * config flow.closedAlertMs is reported like a stuck saga — a warning naming the oldest such
 * keys, and the `flowClosedOverAge` counter the AWS alarm watches.
 */
import { describe, expect, it } from 'vitest';
import { closedAlertMsOf, parseConsumerConfig } from '../../src/consume/config';
import { backlogLogLine } from '../../src/deployment/log';
import { logLineProblems } from '../../src/deployment/log-line';
import type { FlowBacklog } from '../../src/probes/backlog';
import { SAMPLE_BACKLOG } from '../support/backlog';

const backlog = SAMPLE_BACKLOG;
const options = { deployment: 'shop', consumer: 'orchestrator', stream: 'results:{o}', group: 'g', now: () => 1_000_000, emf: true };
const closed = (key: string, headAgeMs: number) => ({ key, headId: `${1_000_000 - headAgeMs}-0`, headAgeMs, waiting: 1 });
const flow = (extra: Partial<FlowBacklog>): FlowBacklog => ({ keys: 7, waiting: 7, readyKeys: 0, closedKeys: [], closedOverAge: 0, busiestKeys: [], limitedKeys: [], waitingOnLimit: 0, ...extra });

describe('the backlog line with flow control', () => {
  it('warns naming the oldest closed keys (at most 5) when any is past its alert age, and publishes the count as a metric', () => {
    const keys = [closed('o-1', 60_000), ...[2, 3, 4, 5, 6, 7].map((n) => closed(`o-${n}`, n * 3_600_000))];
    const line = JSON.parse(backlogLogLine({ ...backlog, flow: flow({ closedKeys: keys, closedOverAge: 6 }) }, options));
    expect(line).toMatchObject({ level: 'warn', msg: 'backlog', flowClosedOverAge: 6 });
    expect(line.detail.closedOverAge.map((k: { key: string }) => k.key)).toEqual(['o-7', 'o-6', 'o-5', 'o-4', 'o-3']);
    expect(line.detail.closedOverAge[0]).toEqual({ key: 'o-7', headId: `${1_000_000 - 7 * 3_600_000}-0`, headAgeMs: 7 * 3_600_000 });
    expect(line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name)).toContain('flowClosedOverAge');
    expect(logLineProblems(line)).toEqual([]);
  });

  it('names only the keys past the alert age, never a younger closed key', () => {
    const keys = [closed('o-1', 60_000), closed('o-2', 7_200_000), closed('o-3', 120_000)];
    const line = JSON.parse(backlogLogLine({ ...backlog, flow: flow({ closedKeys: keys, closedOverAge: 1 }) }, options));
    expect(line.detail.closedOverAge.map((k: { key: string }) => k.key)).toEqual(['o-2']);
  });

  it('stays an info line with a 0 count when no key is past it, and has no flow counter without flow control', () => {
    const line = JSON.parse(backlogLogLine({ ...backlog, flow: flow({ closedKeys: [closed('o-1', 60_000)] }) }, options));
    expect(line).toMatchObject({ level: 'info', flowClosedOverAge: 0 });
    expect(line).not.toHaveProperty('detail');
    expect(JSON.parse(backlogLogLine(backlog, options))).not.toHaveProperty('flowClosedOverAge');
  });

  it('carries the entries waiting on a limit and a full group bucket as counters, not as metrics', () => {
    const limited = { ...closed('t-1', 1_000), waiting: 4, roomInMs: 2_500 };
    const line = JSON.parse(backlogLogLine({ ...backlog, flow: flow({ limitedKeys: [limited], waitingOnLimit: 4 }), rateLimitRoomInMs: 800 }, options));
    expect(line).toMatchObject({ level: 'info', flowWaitingOnLimit: 4, rateLimitRoomInMs: 800 });
    const metrics = line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name);
    expect(metrics).not.toContain('flowWaitingOnLimit');
    expect(metrics).not.toContain('rateLimitRoomInMs');
    expect(logLineProblems(line)).toEqual([]);
    expect(JSON.parse(backlogLogLine(backlog, options))).not.toHaveProperty('rateLimitRoomInMs');
  });

  it('takes the alert age from config flow.closedAlertMs, by default 15 min or 3 × minIdleMs, only where strict order may run', () => {
    const base = { stream: 's', group: 'g', consumer: 'c', runBudgetMs: 60_000, minIdleMs: 600_000 };
    expect(closedAlertMsOf(parseConsumerConfig({ ...base, flow: { order: 'strict', closedAlertMs: 120_000 } }))).toBe(120_000);
    expect(closedAlertMsOf(parseConsumerConfig({ ...base, flow: { order: 'strict' } }))).toBe(1_800_000);
    expect(closedAlertMsOf(parseConsumerConfig({ ...base, minIdleMs: 61_000, flow: { order: 'strict' } }))).toBe(900_000);
    expect(closedAlertMsOf(parseConsumerConfig({ ...base, flow: {} }))).toBeUndefined();
    expect(closedAlertMsOf(parseConsumerConfig({ ...base, flow: false }))).toBeUndefined();
    // No flow named: a saga consumer's default (strict) may apply, so the default age.
    expect(closedAlertMsOf(parseConsumerConfig(base))).toBe(1_800_000);
    expect(() => parseConsumerConfig({ ...base, flow: { closedAlertMs: 120_000 } })).toThrow(/flow\.closedAlertMs: needs flow\.order "strict"/);
    expect(() => parseConsumerConfig({ ...base, flow: { order: 'strict', closedAlertMs: 999 } })).toThrow(/flow\.closedAlertMs/);
  });
});
