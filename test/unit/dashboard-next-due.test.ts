/** The dashboard overview shows each consumer's next due time from the backlog probe (SPEC §5.6). */
import { describe, expect, it } from 'vitest';
import { renderOverview, type ConsumerOverview } from '../../src/dashboard/overview';
import { SAMPLE_BACKLOG } from '../support/backlog';

const backlog = { consumer: 'billing', stream: 'billing:{b}', group: 'g', status: 'ok' as const, ...SAMPLE_BACKLOG };

const row = (extra: object): ConsumerOverview => ({ backlog: { ...backlog, ...extra }, ackedPerMinute: 0, lastRunAgoMs: undefined, samples: [] });
const render = (consumer: ConsumerOverview) => renderOverview({ deployment: 'd', idleRecordSeconds: 300, consumers: [consumer], recentRuns: [] }, '/ops/runs');

describe('dashboard overview: next due', () => {
  it('shows when the next pending entry is due, and how many are due already', () => {
    const html = render(row({ nextDueAt: 1_252_000, nextDueInMs: 252_000, dueNow: 2 }));
    expect(html).toContain('<th>next due</th>');
    expect(html).toContain('2 due now; next in 4.2 min');
    expect(render(row({ nextDueAt: 1_004_000, nextDueInMs: 4_000, dueNow: 0 }))).toContain('in 4.0 s');
  });

  it('shows a dash when nothing in the sample waits', () => {
    const html = render(row({ dueNow: 0 }));
    expect(html).not.toContain('due now');
    expect(html).toMatch(/<td[^>]*>—<\/td>/);
  });
});

describe('dashboard overview: flow control', () => {
  const flow = (extra: object) => ({ keys: 2, waiting: 3, readyKeys: 1, closedKeys: [], closedOverAge: 0, busiestKeys: [], limitedKeys: [], waitingOnLimit: 0, ...extra });

  it('lists the keys closed behind a head with its id and age, and the busiest keys, escaped', () => {
    const html = render(
      row({
        flow: flow({
          closedKeys: [{ key: 'order-<17>', headId: '5-0', headAgeMs: 90_000, waiting: 2 }],
          busiestKeys: [{ key: 'order-<17>', headId: '5-0', headAgeMs: 90_000, waiting: 2 }],
        }),
      }),
    );
    expect(html).toContain('<h2>Flow control</h2>');
    expect(html).toContain('order-&#60;17&#62;: head 5-0, 1.5 min, 2 waiting');
    expect(html).toContain('order-&#60;17&#62; (2)');
    expect(html).not.toContain('order-<17>');
    expect(html).not.toContain('closedAlertMs');
  });

  it('marks the keys closed past their alert age', () => {
    const html = render(row({ flow: flow({ closedKeys: [{ key: 'o-1', headId: '5-0', headAgeMs: 7_200_000, waiting: 1 }], closedOverAge: 1 }) }));
    expect(html).toContain('1 past flow.closedAlertMs (stuck?) — o-1: head 5-0');
  });

  it('shows the entries waiting on a limit: the keys whose own bucket or hold has no room, and a full group bucket', () => {
    const limited = { key: 'tenant-<9>', headId: '7-0', headAgeMs: 1_000, waiting: 4, roomInMs: 2_500 };
    const html = render(row({ flow: flow({ limitedKeys: [limited], waitingOnLimit: 4 }) }));
    expect(html).toContain('<th>waiting on a limit</th>');
    expect(html).toContain('4 entries: tenant-&#60;9&#62; (4, room in 2.5 s)');
    // A full group-wide bucket shows even when no key is leased or waited on.
    const full = render(row({ flow: flow({ keys: 0, waiting: 0 }), rateLimitRoomInMs: 1_200 }));
    expect(full).toContain('group limit full, room in 1.2 s');
  });

  it('shows no flow section when no key is leased or waited on and no limit is full', () => {
    expect(render(row({ flow: flow({ keys: 0, waiting: 0 }) }))).not.toContain('Flow control');
    expect(render(row({ flow: flow({ keys: 0, waiting: 0 }), rateLimitRoomInMs: 0 }))).not.toContain('Flow control');
    expect(render(row({}))).not.toContain('Flow control');
  });
});
