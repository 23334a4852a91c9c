/**
 * The local stack's poll runs: one drain run per trigger (a wake-up after an append, an
 * emulated cron tick, startup), never two at once for the same consumer — a trigger
 * during a run queues exactly one more. Every run prints the JSON line a deployed
 * function would log (runLogLine); the dashboard reads the runs' history from Redis, as it
 * does on every platform.
 *
 * A run's report names when its next pending entry or scheduled event is due (`nextDueAt`,
 * Redis clock: a retry's backoff, a deferral, a saga timeout): the consumer is polled again
 * then, as a platform wake-up would poll it, instead of at its next cron tick — the claim of
 * that run moves the event in and reclaims the entry.
 */
import { runPollJob, runRelayJob, runTrimJob } from '../src/deployment/jobs';
import { runLogLine, type JobReport } from '../src/deployment/log';
import type { DeploymentRuntime } from '../src/deployment/runtime';
import { failureLine } from '../src/deployment/log-line';

/**
 * A poll at a due time comes at least this long after the run that named it: the local clock
 * stands in for Redis's (the stack's own server on this machine), and a clock a little ahead
 * of it finds nothing due yet, which must not become a busy loop of runs.
 */
const MIN_DUE_WAKE_MS = 100;

export interface ConsumerLoopsOptions {
  readonly runtime: DeploymentRuntime;
  /** One JSON line per run (stdout). */
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
  /** Run the outbox relay after every poll run that acked something (the config has a database). */
  readonly relay?: boolean;
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
  /** The poll waiting for the earliest due time a run reported, and that time. */
  dueTimer?: { readonly at: number; readonly timer: ReturnType<typeof setTimeout> };
}

export function createConsumerLoops({ runtime, log, signal, relay: relayAfterCommit = false }: ConsumerLoopsOptions): ConsumerLoops {
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
        if (result.report.nextDueAt !== undefined) pollAt(name, state, result.report.nextDueAt);
        if (relayAfterCommit && result.report.acked > 0) void relay();
      } catch (error) {
        if (!signal.aborted) failed('poll', name, error);
      }
    } while (state.again && !signal.aborted);
  }

  /** Polls `name` again at `at` (ms epoch), unless an earlier poll is already waiting for its due time. */
  function pollAt(name: string, state: LoopState, at: number): void {
    if (signal.aborted || (state.dueTimer !== undefined && state.dueTimer.at <= at)) return;
    if (state.dueTimer !== undefined) clearTimeout(state.dueTimer.timer);
    const timer = setTimeout(() => {
      state.dueTimer = undefined;
      trigger(name);
    }, Math.max(MIN_DUE_WAKE_MS, at - Date.now()));
    timer.unref();
    state.dueTimer = { at, timer };
  }
  signal.addEventListener('abort', () => {
    for (const state of states.values()) if (state.dueTimer !== undefined) clearTimeout(state.dueTimer.timer);
  }, { once: true });

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
        if (relaying.running) running.push(relaying.running);
        if (running.length === 0) return;
        await Promise.all(running);
      }
    },
  };
}
