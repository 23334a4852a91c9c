/**
 * Every exchange of a run is bounded by the run's deadline (issue 12 item 8), whatever the
 * client: a port that never answers (pure logic, so a fake is enough) must not hold the
 * run past deadline + 1 s.
 */
import { describe, expect, it } from 'vitest';
import { createPoller } from '../../src/consume/poller';
import type { RedisPort } from '../../src/redis/port';

function silentPort(transport: 'tcp' | 'rest'): RedisPort & { sent: number } {
  return {
    transport,
    cluster: false,
    sent: 0,
    exchange() {
      this.sent += 1;
      return new Promise(() => {}); // a stalled Redis: no reply, no error
    },
    close: async () => {},
  };
}

describe.each(['tcp', 'rest'] as const)('a run over a %s port that stops answering', (transport) => {
  it('fails as REDIS_UNAVAILABLE within deadline + 1 s', async () => {
    const port = silentPort(transport);
    const poller = createPoller({
      port,
      config: { stream: 's', group: 'g', consumer: 'c', runBudgetMs: 5_000, minIdleMs: 10_000, settleReserveMs: 50, wait: 'sleep' },
      process: async () => ({ kind: 'ack', duplicate: false }),
    });
    const started = Date.now();
    const deadline = started + 400;
    const failure = await poller.run({ mode: 'continuous', deadline }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'REDIS_UNAVAILABLE', message: /before the run's deadline/ });
    expect(Date.now()).toBeLessThan(deadline + 1_000);
    expect(port.sent).toBe(1);
  });
});
