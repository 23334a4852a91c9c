/**
 * The local stack's poll runs: one drain run per trigger (a wake-up after an append, an
 * emulated cron tick, startup), never two at once for the same consumer — a trigger
 * during a run queues exactly one more. Every run prints the JSON line a deployed
 * function would log (runLogLine); the dashboard reads the runs' history from Redis, as it
 * does on every platform.
 *
 * STOP-GAP, remove once the claim script moves due scheduled events (SPEC §5.6: "the move
 * runs inside the claim script of every poll run"): until then only the trim run moves them,
 * and the example's trim runs every 15 minutes — a saga timeout due in 2 s would fire a
 * quarter of an hour late. So the loops run `moveDueEvents` over every consumed stream every
 * `moveDueEveryMs` (1 s) themselves; what a move appends wakes the stream's consumers.
 */
import { runPollJob, runRelayJob, runTrimJob } from '../src/deployment/jobs';
import { runLogLine, type JobReport } from '../src/deployment/log';
import type { DeploymentRuntime } from '../src/deployment/runtime';
import { failureLine } from '../src/deployment/log-line';
import { moveDueEvents } from '../src/schedule/move';

/** STOP-GAP (see the module comment): how often the loops move due scheduled events. */
export const STOPGAP_MOVE_DUE_EVERY_MS = 1_000;

export interface ConsumerLoopsOptions {
  readonly runtime: DeploymentRuntime;
  /** One JSON line per run (stdout). */
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
  /** Run the outbox relay after every poll run that acked something (the config has a database). */
  readonly relay?: boolean;
  /** STOP-GAP: move due scheduled events every this many ms (default STOPGAP_MOVE_DUE_EVERY_MS; 0: never). */
  readonly moveDueEveryMs?: number;
}

export interface ConsumerLoops {
  trigger(consumer: string): void;
  /** Polls every consumer reading one of `streams`. */
  wake(streams: readonly string[]): void;
  triggerAll(): void;
  trim(): Promise<void>;
  /** One outbox relay run now, or one more right after the run in flight. */
  relay(): Promise<void>;
  /** Resolves once no run is in flight or queued. */
  idle(): Promise<void>;
}

interface LoopState {
  running: Promise<void> | undefined;
  again: boolean;
}

export function createConsumerLoops({ runtime, log, signal, relay: relayAfterCommit = false, moveDueEveryMs = STOPGAP_MOVE_DUE_EVERY_MS }: ConsumerLoopsOptions): ConsumerLoops {
  const deployment = runtime.config.name;
  const states = new Map<string, LoopState>([...runtime.config.consumers.keys()].map((name) => [name, { running: undefined, again: false }]));
  let trimming: Promise<void> | undefined;
  const relaying: LoopState = { running: undefined, again: false };

  const emit = log;
  const failed = (job: 'poll' | 'trim' | 'relay', consumer: string | undefined, error: unknown) =>
    emit(failureLine({ deployment, job, consumer, now: Date.now }, error));
  const report = (result: JobReport) => emit(runLogLine(result, { deployment }));

  // The relay publishes what handlers committed to the outbox; its appends wake the next step.
  const relay = (): Promise<void> => {
    if (signal.aborted) return Promise.resolve();
    if (relaying.running) {
      relaying.again = true;
      return relaying.running;
    }
    relaying.running = (async () => {
      do {
        relaying.again = false;
        await runRelayJob(runtime).then(report, (error) => failed('relay', undefined, error));
      } while (relaying.again && !signal.aborted);
    })().finally(() => {
      relaying.running = undefined;
    });
    return relaying.running;
  };

  async function runLoop(name: string, state: LoopState): Promise<void> {
    const budgetMs = runtime.config.consumers.get(name)!.config.runBudgetMs;
    do {
      state.again = false;
      try {
        const result = await runPollJob(runtime, name, { deadline: Date.now() + budgetMs, signal });
        report(result);
        if (relayAfterCommit && result.report.acked > 0) void relay();
      } catch (error) {
        if (!signal.aborted) failed('poll', name, error);
      }
    } while (state.again && !signal.aborted);
  }

  const trigger = (name: string) => {
    const state = states.get(name);
    if (!state || signal.aborted) return;
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = runLoop(name, state).finally(() => {
      state.running = undefined;
    });
  };

  const wake = (streams: readonly string[]) => {
    for (const plan of runtime.config.consumers.values()) if (streams.includes(plan.config.stream)) trigger(plan.name);
  };

  // STOP-GAP (module comment). A failed move is not logged: it changed nothing, the next tick
  // tries again, and the poll runs and stream watchers already report an unreachable Redis.
  let moving: Promise<void> | undefined;
  const streams = [...new Set([...runtime.config.consumers.values()].map((plan) => plan.config.stream))];
  const moveDue = async () => {
    for (const stream of streams) {
      if ((await moveDueEvents(runtime.port, stream)).moved > 0) wake([stream]);
    }
  };
  if (moveDueEveryMs > 0 && !signal.aborted) {
    const timer = setInterval(() => {
      if (moving || signal.aborted) return;
      moving = moveDue()
        .catch(() => {})
        .finally(() => {
          moving = undefined;
        });
    }, moveDueEveryMs);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  return {
    trigger,
    wake,
    triggerAll() {
      for (const name of states.keys()) trigger(name);
    },
    trim() {
      trimming ??= runTrimJob(runtime)
        .then(report, (error) => failed('trim', undefined, error))
        .finally(() => {
          trimming = undefined;
        });
      return trimming;
    },
    relay,
    async idle() {
      for (;;) {
        const running = [...states.values()].map((s) => s.running).filter((p): p is Promise<void> => p !== undefined);
        if (trimming) running.push(trimming);
        if (moving) running.push(moving);
        if (relaying.running) running.push(relaying.running);
        if (running.length === 0) return;
        await Promise.all(running);
      }
    },
  };
}
