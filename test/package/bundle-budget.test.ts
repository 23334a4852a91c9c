/**
 * Bundle budgets (sizes are deterministic, unlike times), measured on esbuild's output the
 * way wrangler and the CDK construct bundle: the Worker ≤ 100 KiB gzip, the Lambda poll
 * function ≤ 116 KiB gzip (110 before @opentelemetry/api, 115 before the dashboard's history record). Before zod namespace imports, lazy clients and a lazy SQS SDK they
 * were 143 and 188 KiB (every zod locale shipped; @upstash/redis in TCP Lambdas).
 */
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const KIB = 1024;
const WORKER_BUDGET = 100 * KIB;
// 115 (was 110): @opentelemetry/api, a runtime dependency since issue 17 §2, adds 4.7 KiB (109.4 → 114.1).
// 116 (was 115): the dashboard's history record at each run's end (issue 17 §1: ops-record.lua
// and deployment/run-history.ts, one script call per run) adds 1.0 KiB (114.4 → 115.4).
// 117 (was 116): the overlapped run loop (claim ahead, blocking wait with reclaim, first-claim
// probe, run memory; issue 15) adds 1.1 KiB (115.4 → 116.5).
const LAMBDA_POLL_BUDGET = 117 * KIB;

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

async function bundle(options: BuildOptions): Promise<{ gzip: number; inputs: string[] }> {
  const result = await build({ bundle: true, write: false, minify: true, metafile: true, logLevel: 'silent', outdir: '/virtual', ...options });
  const js = result.outputFiles!.find((file) => file.path.endsWith('.js'))!;
  const output = Object.values((result.metafile as Metafile).outputs).find((o) => o.entryPoint)!;
  return { gzip: gzipSync(js.contents).length, inputs: Object.keys(output.inputs) };
}

describe('bundle budgets', () => {
  it('the Worker of a deployment is at most 100 KiB gzip, without zod locales or Node clients', async () => {
    const { gzip, inputs } = await bundle({
      entryPoints: [path('../worker/fixtures/worker-entry.ts')],
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      define: { __TEST_PREFIX__: '"budget"' },
    });
    console.log(`Worker: ${(gzip / KIB).toFixed(1)} KiB gzip`);
    expect(gzip).toBeLessThanOrEqual(WORKER_BUDGET);
    expect(inputs.filter((input) => /zod\/.*locales\/(?!en)/.test(input))).toEqual([]);
    expect(inputs.some((input) => input.includes('node_modules/ioredis'))).toBe(false);
  });

  it('the Lambda poll function of a TCP deployment is at most 116 KiB gzip, without Hono or the AWS SDK', async () => {
    const { gzip, inputs } = await bundle({
      entryPoints: [path('./fixtures/lambda-handlers.ts')],
      format: 'cjs',
      platform: 'node',
      target: 'node22',
      keepNames: true,
      // As the CDK construct bundles: the SDK is the runtime's, and node-postgres stays out
      // of a deployment without a database (the fixture's config has none).
      external: ['@aws-sdk/*', 'pg'],
    });
    console.log(`Lambda poll: ${(gzip / KIB).toFixed(1)} KiB gzip`);
    expect(gzip).toBeLessThanOrEqual(LAMBDA_POLL_BUDGET);
    expect(inputs.some((input) => input.includes('@aws-sdk') || input.includes('node_modules/hono'))).toBe(false);
  });
});
