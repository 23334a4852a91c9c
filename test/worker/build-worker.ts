/**
 * Bundles a Worker entry the way wrangler does for workerd (ESM, `workerd`/`worker`/
 * `browser` export conditions, no Node built-ins), so Miniflare runs built code.
 */
import { build } from 'esbuild';
import { join } from 'node:path';

export async function buildWorker(entry: string, outdir: string, define: Record<string, string> = {}): Promise<string> {
  const outfile = join(outdir, 'worker.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    define: Object.fromEntries(Object.entries(define).map(([name, value]) => [name, JSON.stringify(value)])),
    logLevel: 'silent',
  });
  return outfile;
}
