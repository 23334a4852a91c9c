/**
 * Runs one benchmark scenario in its own process (so RSS and GC are its own) and prints
 * `RESULT <json>` as its last line. Invoked by bench/run.ts.
 */
import { useNodeCrypto } from '../src/node/crypto';
import { runBullmq, type BullParams } from './scenarios/bullmq';
import { runHttp, type HttpParams } from './scenarios/http';
import { runRest } from './scenarios/rest';
import { runLatency, type LatencyParams } from './scenarios/latency';
import { runPerMessage } from './scenarios/per-message';
import { runProduct } from './scenarios/product';
import { runRaw } from './scenarios/raw';
import type { ScenarioResult, StreamParams } from './scenarios/types';

type Job =
  | { scenario: 'product' | 'per-message' | 'raw' | 'rest'; params: StreamParams }
  | { scenario: 'http'; params: HttpParams }
  | { scenario: 'bullmq'; params: BullParams }
  | { scenario: 'latency'; params: LatencyParams };

async function main(job: Job): Promise<ScenarioResult> {
  switch (job.scenario) {
    case 'product':
      return runProduct(job.params);
    case 'per-message':
      return runPerMessage(job.params);
    case 'raw':
      return runRaw(job.params);
    case 'bullmq':
      return runBullmq(job.params);
    case 'latency':
      return runLatency(job.params);
    case 'rest':
      return runRest(job.params);
    case 'http':
      return runHttp(job.params);
  }
}

// As every Node entry point of the product does (Lambda, CLI, local stack); the per-message
// baseline verifies through the same engine, so the comparison stays like for like.
useNodeCrypto();

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
