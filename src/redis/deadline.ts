/**
 * A port wrapper that bounds every exchange by a run's deadline, whatever the client's own
 * exchange timeout (10 s by default): under a stalled Redis a run must still end, and report,
 * shortly after its deadline — on Lambda the platform would otherwise kill it and lose the
 * report, and past minIdle another run would reclaim its entries. Port-agnostic: the same
 * bound holds over TCP and REST. The abandoned exchange is left to the client's own timeout.
 */
import { RedisUnavailableError } from '../ground/errors';
import { withTimeLimit } from '../ground/time-limit';
import type { RedisPort } from './port';

/** How long after its deadline a run may still wait for Redis (its final settle, typically). */
export const DEADLINE_OVERRUN_MS = 500;

/**
 * `port`, with each exchange failing as RedisUnavailableError once `until` (epoch ms) passes;
 * `deadline` names it in the message (a run's, a probe's).
 */
export function boundByDeadline(port: RedisPort, until: number, now: () => number = Date.now, deadline = "the run's deadline"): RedisPort {
  const pastDeadline = () => new RedisUnavailableError(`redis unreachable: no reply before ${deadline}`);
  return {
    transport: port.transport,
    cluster: port.cluster,
    exchange(commands) {
      const left = until - now();
      if (left <= 0) return Promise.reject(pastDeadline());
      return withTimeLimit(port.exchange(commands), left, pastDeadline);
    },
    blockingReader:
      port.blockingReader &&
      (() => {
        const reader = port.blockingReader!();
        return {
          read(cmd, signal) {
            const left = until - now();
            if (left <= 0) return Promise.reject(pastDeadline());
            return withTimeLimit(reader.read(cmd, signal), left, pastDeadline);
          },
        };
      }),
    close: () => port.close(),
  };
}
