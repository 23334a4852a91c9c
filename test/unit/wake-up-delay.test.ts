/**
 * Wake-ups for scheduled events (SPEC §5.6): a publish asks for one at each due time, and the
 * platform senders delay the message by it — whole seconds, rounded up, never early — or send
 * nothing past their platform's bound (SQS DelaySeconds 900 s, Queues delaySeconds 43,200 s),
 * leaving the event to the scheduled poll.
 */
import { describe, expect, it } from 'vitest';
import { sqsWakeUp } from '../../functions/aws/lib/sqs-wake-up';
import { queueWakeUp } from '../../functions/cloudflare/wake-up-queue';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { plannedWakeUps, QUEUES_MAX_DELAY_SECONDS, SQS_MAX_DELAY_SECONDS, wakeUpDelaySeconds } from '../../src/deployment/wake-up-plan';
import type { PublishResult } from '../../src/publish/publisher';

const result = (stream: string, scheduled?: PublishResult['scheduled']): PublishResult => ({
  eventId: `e-${Math.random()}`,
  eventType: 't',
  stream,
  entryId: scheduled ? '' : '1-0',
  duplicate: false,
  ...(scheduled ? { scheduled } : {}),
});

describe('planned wake-ups', () => {
  it('wakes now for appended entries, and once per distinct delay (whole seconds, rounded up) for scheduled ones', () => {
    const planned = plannedWakeUps([
      result('a'),
      result('b', { deliverAtMs: 10_000, dueInMs: 1_001, cancelled: false }),
      result('c', { deliverAtMs: 10_000, dueInMs: 2_000, cancelled: false }),
      result('a'),
      result('d', { deliverAtMs: 10_000, dueInMs: 0, cancelled: false }), // due already: now
      result('e', { deliverAtMs: 10_000, dueInMs: 5_000, cancelled: true }), // cancelled: nobody
      result('f', { deliverAtMs: 10_000, dueInMs: undefined, cancelled: false }), // unknown: nobody
      result('g', { deliverAtMs: 10_000, dueInMs: 500, cancelled: false }),
    ]);
    expect(planned).toEqual([
      { streams: ['a', 'd'], delayMs: undefined },
      { streams: ['g'], delayMs: 1_000 },
      { streams: ['b', 'c'], delayMs: 2_000 },
    ]);
  });

  it('rounds delays up to whole seconds and refuses those past the bound', () => {
    expect(wakeUpDelaySeconds(0, 900)).toBe(0);
    expect(wakeUpDelaySeconds(1, 900)).toBe(1);
    expect(wakeUpDelaySeconds(1_000, 900)).toBe(1);
    expect(wakeUpDelaySeconds(1_001, 900)).toBe(2);
    expect(wakeUpDelaySeconds(900_000, SQS_MAX_DELAY_SECONDS)).toBe(900);
    expect(wakeUpDelaySeconds(900_001, SQS_MAX_DELAY_SECONDS)).toBeUndefined();
    expect(wakeUpDelaySeconds(43_200_000, QUEUES_MAX_DELAY_SECONDS)).toBe(43_200);
    expect(wakeUpDelaySeconds(43_200_001, QUEUES_MAX_DELAY_SECONDS)).toBeUndefined();
  });
});

function deployment(wakeUp: { kind: 'sqs'; queueUrlEnv: string } | { kind: 'cloudflare-queue'; binding: string }) {
  return defineConfig({
    name: 'waker',
    redis: { tcp: {} },
    streams: { 'ev:{e}': { keyTag: 'e', auth: { mode: 'exclusive-stream', producer: 'p' } } },
    routes: { ev: 'ev:{e}' },
    consumers: { w: { stream: 'ev:{e}', group: 'g', wakeUp: true, settings: { runBudgetMs: 5_000, minIdleMs: 10_000 }, handler: entryConsumer(() => {}) } },
    wakeUp,
  });
}

describe('platform senders', () => {
  it('SQS: DelaySeconds for a scheduled wake-up, none for an immediate one, nothing past 900 s', async () => {
    const sent: Array<Record<string, unknown>> = [];
    const wake = sqsWakeUp(deployment({ kind: 'sqs', queueUrlEnv: 'Q' }), { Q: 'https://sqs/q' }, { send: async (command) => void sent.push({ ...command.input }) })!;
    await wake(['ev:{e}']);
    await wake(['ev:{e}'], 1_500);
    await wake(['ev:{e}'], 900_000);
    await wake(['ev:{e}'], 900_001);
    const body = JSON.stringify({ streams: ['ev:{e}'] });
    expect(sent).toEqual([
      { QueueUrl: 'https://sqs/q', MessageBody: body },
      { QueueUrl: 'https://sqs/q', MessageBody: body, DelaySeconds: 2 },
      { QueueUrl: 'https://sqs/q', MessageBody: body, DelaySeconds: 900 },
    ]);
  });

  it('Cloudflare Queues: delaySeconds for a scheduled wake-up, none for an immediate one, nothing past 12 h', async () => {
    const sent: Array<{ body: unknown; options: unknown }> = [];
    const queue = { send: async (body: unknown, options?: unknown) => void sent.push({ body, options }) };
    const wake = queueWakeUp(deployment({ kind: 'cloudflare-queue', binding: 'WAKE' }), { WAKE: queue })!;
    await wake(['ev:{e}']);
    await wake(['ev:{e}'], 60_000);
    await wake(['ev:{e}'], 43_200_001);
    expect(sent).toEqual([
      { body: { streams: ['ev:{e}'] }, options: { contentType: 'json' } },
      { body: { streams: ['ev:{e}'] }, options: { contentType: 'json', delaySeconds: 60 } },
    ]);
  });
});
