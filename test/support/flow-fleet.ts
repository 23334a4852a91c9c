/**
 * Flow-control tests' fleet (SPEC §5.7): concurrent poll runs, each on a port of its own, and
 * what their handlers saw, recorded by the handlers themselves: per key the most in flight at
 * once, each handler's [start, end] and the order of commits.
 */
import type { ConsumerConfig } from '../../src/consume/config';
import { createPoller } from '../../src/consume/poller';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import type { RunReport } from '../../src/consume/report';
import type { HandlerOutcome } from '../../src/verdict/verdict';
import { decodeText } from '../../src/ground/text';
import type { RedisPort } from '../../src/redis/port';
import { sleepMs } from './poller';

export class InFlight {
  readonly #now = new Map<string, number>();
  readonly peak = new Map<string, number>();
  readonly intervals = new Map<string, Array<[number, number]>>();
  /** Payloads in the order their handlers committed. */
  readonly committed: string[] = [];
  /** Payload → when its handler first started (performance.now()). */
  readonly startedAt = new Map<string, number>();
  /** Payload → when its handler committed. */
  readonly committedAt = new Map<string, number>();

  /** One handler of `key`: in flight for `workMs`, then it commits — or, with `retain`, throws (the entry is retained). */
  async handle(key: string, payload: string, workMs: number, retain = false): Promise<'committed'> {
    const running = (this.#now.get(key) ?? 0) + 1;
    this.#now.set(key, running);
    this.peak.set(key, Math.max(this.peak.get(key) ?? 0, running));
    const start = performance.now();
    if (!this.startedAt.has(payload)) this.startedAt.set(payload, start);
    await sleepMs(workMs);
    this.#now.set(key, this.#now.get(key)! - 1);
    const list = this.intervals.get(key) ?? [];
    list.push([start, performance.now()]);
    this.intervals.set(key, list);
    if (retain) throw new Error(`${payload} retained by its handler`);
    this.committed.push(payload);
    this.committedAt.set(payload, performance.now());
    return 'committed';
  }

  /** The most intervals of one key that overlap at any instant (from the timestamps alone). */
  overlapOf(key: string): number {
    const edges = (this.intervals.get(key) ?? []).flatMap(([start, end]) => [
      [start, 1],
      [end, -1],
    ]);
    // An end before a start at the same instant: back to back is not overlapping.
    edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    let open = 0;
    let most = 0;
    for (const [, step] of edges) most = Math.max(most, (open += step!));
    return most;
  }
}

export interface Fleet {
  readonly connect: () => RedisPort;
  /** One config per concurrent run (each its own consumer). */
  readonly configs: readonly ConsumerConfig[];
  /** The handler, given the payload as text ('<key>:<n>'). */
  readonly handle: (text: string) => Promise<HandlerOutcome>;
  readonly done: () => boolean;
  /** Default 30 s. */
  readonly timeoutMs?: number;
}

/** Runs one drain run per config at once, over and over, until `done()` or the timeout; returns every run's report. */
export async function runFleet({ connect, configs, handle, done, timeoutMs = 30_000 }: Fleet): Promise<RunReport[]> {
  const ports = configs.map(() => connect());
  const reports: RunReport[] = [];
  try {
    const pollers = ports.map((port, i) => createPoller({ port, config: configs[i]!, process: createProcessor(rawPayload, ({ payload }) => handle(decodeText(payload))) }));
    const until = Date.now() + timeoutMs;
    while (!done() && Date.now() < until) {
      reports.push(...(await Promise.all(pollers.map((poller) => poller.run({ mode: 'drain' })))));
      // A key closed behind a head in backoff: nothing is due for a while; do not spin on it.
      if (reports.slice(-configs.length).every((report) => report.handled === 0)) await sleepMs(50);
    }
  } finally {
    await Promise.all(ports.map((port) => port.close()));
  }
  return reports;
}
