/** A port wrapper that counts round trips, so a round can report what it really cost. */
import type { RedisPort } from './port';

export interface MeteredPort extends RedisPort {
  readonly roundTrips: number;
}

export function meterPort(port: RedisPort): MeteredPort {
  let roundTrips = 0;
  return {
    transport: port.transport,
    cluster: port.cluster,
    get roundTrips() {
      return roundTrips;
    },
    exchange(commands) {
      roundTrips += 1;
      return port.exchange(commands);
    },
    blockingReader:
      port.blockingReader &&
      (() => {
        const reader = port.blockingReader!();
        return {
          read(cmd, signal) {
            roundTrips += 1;
            return reader.read(cmd, signal);
          },
        };
      }),
    close: () => port.close(),
  };
}
