/** BullMQ processing the same number of no-op jobs (prefilled by the parent). */
import { Worker } from 'bullmq';
import { rssPeakMiB, type ScenarioResult } from './types';

export interface BullParams {
  readonly redisUrl: string;
  readonly queue: string;
  readonly count: number;
  readonly concurrency: number;
}

export async function runBullmq(params: BullParams): Promise<ScenarioResult> {
  const url = new URL(params.redisUrl);
  const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
  let done = 0;
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(params.queue, async () => undefined, { connection, concurrency: params.concurrency, autorun: true });
    worker.on('completed', () => {
      done += 1;
      if (done === params.count) resolve();
    });
    worker.on('error', reject);
    finish = () => worker.close();
  });
  const seconds = (performance.now() - started) / 1000;
  await finish();
  return { entries: done, seconds, rssPeakMiB: rssPeakMiB() };
}

let finish: () => Promise<void> = async () => undefined;
