/**
 * Runs one benchmark scenario in its own process (so RSS and GC are its own) and prints
 * `RESULT <json>` as its last line. Invoked by bench/run.ts.
 */
import { createInterface } from 'node:readline';
import type { BullParams } from './scenarios/bullmq';
import type { HttpParams } from './scenarios/http';
import type { LatencyParams } from './scenarios/latency';
import type { ScenarioResult, StreamParams } from './scenarios/types';

type Job = (
  | { scenario: 'product' | 'per-message' | 'raw' | 'raw-verify' | 'rest'; params: StreamParams; warmup?: StreamParams }
  | { scenario: 'http'; params: HttpParams; warmup?: undefined }
  | { scenario: 'bullmq'; params: BullParams; warmup?: BullParams }
  | { scenario: 'latency'; params: LatencyParams; warmup?: undefined }
) & {
  /** Processes that run side by side: each says READY after its warm-up and starts on GO. */
  readonly barrier?: boolean;
};

/** Waits for the parent's GO line on stdin. */
function barrier(): Promise<void> {
  console.log('READY');
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once('line', () => {
      lines.close();
      resolve();
    });
  });
}

/**
 * The warm-up pass runs the same scenario on its own prefilled workload first, untimed, so
 * the timed pass measures the steady state of every contender alike rather than how fast
 * each one's code gets compiled (a quick run's product pass is only a dozen rounds).
 */
async function main(job: Job): Promise<ScenarioResult> {
  if (job.warmup !== undefined) await run({ ...job, params: job.warmup } as Job);
  if (job.barrier) await barrier();
  return run(job);
}

/**
 * Each scenario's module is loaded only when it runs: peak RSS is part of what is measured,
 * and a child that loaded every contender (BullMQ, the HTTP app, the REST server) would carry
 * all of them in every figure — ~70 MiB before the first entry.
 */
async function run(job: Job): Promise<ScenarioResult> {
  switch (job.scenario) {
    case 'product':
      return (await import('./scenarios/product')).runProduct(job.params);
    case 'per-message':
      return (await import('./scenarios/per-message')).runPerMessage(job.params);
    case 'raw':
      return (await import('./scenarios/raw')).runRaw(job.params);
    case 'raw-verify':
      return (await import('./scenarios/raw-verify')).runRawVerify(job.params);
    case 'bullmq':
      return (await import('./scenarios/bullmq')).runBullmq(job.params);
    case 'latency':
      return (await import('./scenarios/latency')).runLatency(job.params);
    case 'rest':
      return (await import('./scenarios/rest')).runRest(job.params);
    case 'http':
      return (await import('./scenarios/http')).runHttp(job.params);
  }
}

main(JSON.parse(process.argv[2]!) as Job).then(
  (result) => {
    console.log(`RESULT ${JSON.stringify(result)}`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
