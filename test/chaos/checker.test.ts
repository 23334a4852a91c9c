/**
 * The chaos checker's judgement, driven with synthetic ledgers and probe lines (no
 * processes, no Redis): what counts as an ack before commit (I2), and what the direct
 * probe may still speak for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEADLINE_GRACE_MS, History } from '../../chaos/checker';
import { FlowIntervals } from '../../chaos/flow-check';
import { compareIds } from '../../chaos/ids';
import { ScheduleWatch } from '../../chaos/scheduled';
import { LedgerWriter } from '../../chaos/ledger';
import { handlerTimeLimit, probeInTime, PROBE_MARGIN_MS } from '../../chaos/probe';

const STREAM = 'chaos:{c}:unit';
const ENTRY = '1700000000000-0';

let dir: string;
let history: History;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'saga-chaos-checker-test-'));
  history = new History(STREAM, `${STREAM}:dlt`, ['g1', 'g2'], dir);
  history.add({ id: ENTRY, eventId: 'unit-0', kind: 'normal', label: 'event' });
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

function ledgerOf(consumer: string): LedgerWriter {
  return new LedgerWriter(join(dir, `${consumer}.ledger`), 'write');
}

/** B's probe line: its entry was gone from the PEL while its handler was inside its limit. */
const probeOfB = { pid: 2, group: 'g1', entryId: ENTRY, lastDelivered: '1700000000500-0' };

describe('I2 probe: an entry gone from the PEL', () => {
  it('is a late ack of another consumer’s commit, not I2, when a ledger holds its commit when the probe is judged', async () => {
    // The race of issue 24 item 7: A commits and sends its ack, a stalled proxy holds the
    // ack past minIdle, B reclaims the entry and starts it, A's ack lands, B's probe finds
    // the entry gone. A's ledger line was written before its ack was sent, so it is there
    // when B's probe line is judged — even if the checker last read the ledgers before it.
    history.readLedgers();
    await ledgerOf('g1-p0').commit({ group: 'g1', entryId: ENTRY, eventId: 'unit-0' });
    history.earlyAck(probeOfB);
    expect(history.violationCounts.I2).toBe(0);
    expect(history.lateAcksOfCommitted).toBe(1);
  });

  it('is I2 when no ledger holds its commit', () => {
    history.earlyAck(probeOfB);
    expect(history.violationCounts.I2).toBe(1);
    expect(history.violations[0]!.detail).toContain(ENTRY);
  });

  it('is I2 when only another group committed the entry', async () => {
    await ledgerOf('g2-p0').commit({ group: 'g2', entryId: ENTRY, eventId: 'unit-0' });
    history.earlyAck(probeOfB);
    expect(history.violationCounts.I2).toBe(1);
  });

  it('is a forgotten delivery, not I2, when the entry is above the group’s last-delivered id (a Redis restart)', () => {
    history.earlyAck({ ...probeOfB, lastDelivered: '1699999999999-0' });
    expect(history.violationCounts.I2).toBe(0);
    expect(history.forgottenDeliveries).toBe(1);
  });
});

describe('the probe’s time limit is the product’s', () => {
  const handlerTimeoutMs = 300;

  it('is the handler timeout when the run has time left', () => {
    expect(handlerTimeLimit(10_000, handlerTimeoutMs, 20_000)).toBe(10_300);
  });

  it('is cut at the run’s settle time (deadline − settleReserve) when that comes first', () => {
    // SPEC §5.1 step 2: min(handlerTimeout, deadline − now − settleReserve). A handler that
    // starts 100 ms before the settle time is given up on 100 ms later, not 300.
    const settleBy = 10_100;
    const limit = handlerTimeLimit(10_000, handlerTimeoutMs, settleBy);
    expect(limit).toBe(settleBy);
    expect(probeInTime(settleBy - PROBE_MARGIN_MS - 1, limit)).toBe(true);
    expect(probeInTime(10_200, limit)).toBe(false);
  });
});

describe('I6: no run ends later than its deadline + 1 s', () => {
  const deadline = 50_000;
  const start = { pid: 7, startedAt: deadline - 1_200, deadline };
  const run = { ...start, consumer: 'g1-p0' };

  it('holds for a run that reports its end at deadline + 1,000 ms', () => {
    history.runStarted(start);
    history.runEnded({ ...run, endedAt: deadline + DEADLINE_GRACE_MS });
    expect(history.violationCounts.I6).toBe(0);
    expect(history.worstOvershootMs).toBe(1_000);
  });

  it('fails a run that reports its end at deadline + 1,001 ms, naming the overshoot', () => {
    history.runStarted(start);
    history.runEnded({ ...run, endedAt: deadline + 1_001 });
    expect(history.violationCounts.I6).toBe(1);
    expect(history.violations[0]!.detail).toContain('1001 ms after its deadline');
  });

  it('fails a run that never reports and is still running 1,500 ms past its deadline when its process goes', () => {
    // The old watchdog called a silent run hung only 3 s past its deadline.
    history.runStarted(start);
    history.processGone(start.pid, deadline + 1_500);
    expect(history.violationCounts.I6).toBe(1);
    expect(history.violations[0]!.detail).toContain('1500 ms after its deadline');
    expect(history.worstOvershootMs).toBe(1_500);
  });

  it('does not blame a run whose process was killed before its deadline + 1 s', () => {
    history.runStarted(start);
    history.processGone(start.pid, deadline + 900);
    expect(history.violationCounts.I6).toBe(0);
  });

  it('judges a silent run by its own start line, not by a later run of the same process', () => {
    history.runStarted(start);
    history.runEnded({ ...run, endedAt: deadline - 10 });
    history.runStarted({ pid: 7, startedAt: deadline, deadline: deadline + 1_200 });
    history.processGone(7, deadline + 2_000);
    expect(history.violationCounts.I6).toBe(0);
  });
});

describe('I9: handlers of one flow key in flight (flow-check.ts)', () => {
  const start = (pid: number, entryId: string, at: number, key = 'k', group = 'g1', leaseEnd = at + 10_000) => ({ pid, group, key, entryId, start: at, leaseEnd });
  const limits = (group: string) => (group === 'g2' ? 2 : 1);

  it('flags a start while the limit is in flight, and not one back to back or on another key or group', () => {
    const flow = new FlowIntervals();
    flow.started(start(1, 'e1', 100));
    flow.ended({ pid: 1, entryId: 'e1', start: 100, end: 200 });
    flow.started(start(2, 'e2', 200)); // back to back: e1 ended as e2 started
    flow.ended({ pid: 2, entryId: 'e2', start: 200, end: 300 });
    flow.started(start(3, 'e3', 250, 'other'));
    flow.ended({ pid: 3, entryId: 'e3', start: 250, end: 400 });
    flow.started(start(4, 'e4', 250, 'k', 'g2'));
    flow.ended({ pid: 4, entryId: 'e4', start: 250, end: 400 });
    expect(flow.violations(limits)).toEqual([]);
    flow.started(start(5, 'e5', 290));
    flow.ended({ pid: 5, entryId: 'e5', start: 290, end: 310 });
    expect(flow.violations(limits)).toEqual([expect.stringContaining('group g1 key k: e5 (pid 5) started at 290 with 1 in flight (limit 1): e2 (pid 2, 200..300)')]);
  });

  it('allows the limit in flight at once, and flags one more', () => {
    const flow = new FlowIntervals();
    for (const [pid, at] of [[1, 0], [2, 10], [3, 20]] as const) {
      flow.started(start(pid, `e${pid}`, at, 'k', 'g2'));
      flow.ended({ pid, entryId: `e${pid}`, start: at, end: at + 100 });
    }
    expect(flow.violations(limits)).toEqual([expect.stringContaining('e3 (pid 3) started at 20 with 2 in flight (limit 2)')]);
  });

  it('ends the handlers of a process when it is gone, and a handler at its lease end (counted past it)', () => {
    const flow = new FlowIntervals();
    flow.started(start(1, 'e1', 0, 'k', 'g1', 5_000));
    flow.processGone(1, 1_000); // SIGKILLed mid-handler
    flow.started(start(2, 'e2', 1_500, 'k', 'g1', 2_000));
    flow.ended({ pid: 2, entryId: 'e2', start: 1_500, end: 9_000 }); // ran past its lease
    flow.started(start(3, 'e3', 2_500));
    flow.ended({ pid: 3, entryId: 'e3', start: 2_500, end: 2_600 });
    expect(flow.violations(limits)).toEqual([]);
    expect(flow.pastLease).toBe(1);
    expect(flow.handlers).toBe(3);
  });
});

describe('I10: strict order per flow key (flow-check.ts)', () => {
  const start = (pid: number, entryId: string, at: number, key = 'k', group = 'g1') => ({ pid, group, key, entryId, start: at, leaseEnd: at + 10_000 });
  const entries = [
    { id: '1-0', key: 'k' },
    { id: '2-0', key: 'other' },
    { id: '3-0', key: 'k' },
    { id: '4-0', key: 'k' },
  ];

  it('passes a key whose every entry started after the earlier ones committed, retries and other keys included', () => {
    const flow = new FlowIntervals();
    flow.started(start(1, '1-0', 100)); // retained: no commit
    flow.started(start(2, '2-0', 120, 'other')); // another key does not wait
    flow.started(start(2, '1-0', 500));
    flow.committed({ pid: 2, group: 'g1', entryId: '1-0', at: 510 });
    flow.committed({ pid: 3, group: 'g1', entryId: '1-0', at: 900 }); // a redelivery's second commit: the first counts
    flow.started(start(3, '3-0', 520));
    flow.committed({ pid: 3, group: 'g1', entryId: '3-0', at: 530 });
    flow.started(start(4, '4-0', 540));
    expect(flow.orderViolations('g1', entries, () => false)).toEqual([]);
    expect(flow.orderViolations('g2', entries, () => false)).toEqual([]);
  });

  it('flags a start before an earlier entry committed, or while one never did; a commit of unknown time is not judged', () => {
    const flow = new FlowIntervals();
    flow.started(start(1, '1-0', 100));
    flow.started(start(2, '3-0', 150)); // overtook 1-0
    flow.committed({ pid: 1, group: 'g1', entryId: '1-0', at: 200 });
    flow.committed({ pid: 2, group: 'g1', entryId: '3-0', at: 210 });
    expect(flow.orderViolations('g1', entries, () => false)).toEqual([expect.stringContaining('group g1 key k: 3-0 started at 150, before the earlier 1-0 committed at 200')]);

    const stuck = new FlowIntervals();
    stuck.started(start(1, '3-0', 100)); // 1-0 never committed at all
    expect(stuck.orderViolations('g1', entries, () => false)).toEqual([expect.stringContaining('3-0 started at 100, and the earlier 1-0 never committed')]);
    // Its ledger holds a commit whose line was lost with its process: not judged.
    expect(stuck.orderViolations('g1', entries, (id) => id === '1-0')).toEqual([]);
  });
});

describe('I8: scheduled events seen by the stream scan (scheduled.ts)', () => {
  /** The two reads the watch makes, over an in-memory stream and schedule. */
  function adminOver(entries: Array<[string, string]>, scheduled: string[] = []) {
    return {
      xrange: async (_stream: string, start: string) => {
        const after = start.slice(1);
        return entries.filter(([id]) => compareIds(id, after) > 0).map(([id, eventId]) => [id, ['event_id', eventId, 'payload', '{}']]);
      },
      zscore: async (_key: string, member: string) => (scheduled.includes(member) ? '1' : null),
    } as unknown as Parameters<ScheduleWatch['scan']>[0];
  }

  it('judges an event the move appended before its publisher heard back, instead of calling it lost', async () => {
    const stream: Array<[string, string]> = [['1000-0', 'scheduled-1']];
    const watch = new ScheduleWatch(STREAM, history);
    await watch.scan(adminOver(stream)); // the move was seen before the (retried) publish answered
    watch.expect('scheduled-1', 900);
    watch.expect('scheduled-2', 5_000); // still waiting in the schedule
    expect(await watch.finish(adminOver(stream, ['scheduled-2']), 'schedule')).toBe(1);
    expect(history.violations).toEqual([]);
    expect(watch.moved).toBe(1);
  });

  it('still flags an early append, a second append and a lost event', async () => {
    const stream: Array<[string, string]> = [['1000-0', 'scheduled-1'], ['1001-0', 'scheduled-2'], ['1002-0', 'scheduled-2']];
    const watch = new ScheduleWatch(STREAM, history);
    await watch.scan(adminOver(stream));
    watch.expect('scheduled-1', 1_500); // appended 500 ms before due
    watch.expect('scheduled-2', 900);
    watch.expect('scheduled-3', 900); // in neither
    await watch.finish(adminOver(stream), 'schedule');
    expect(history.violations.map((v) => v.detail)).toEqual([
      expect.stringContaining('scheduled-1 was appended at 1000'),
      expect.stringContaining('scheduled-2 was appended twice (1001-0 and 1002-0)'),
      expect.stringContaining('scheduled-3 is neither in the stream nor in the schedule'),
    ]);
  });
});
