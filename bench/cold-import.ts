/**
 * Cold import of the built poll bundle (issue 14): the poll function of the example
 * deployment (saga.config.ts) bundled the way the CDK construct bundles it — the same
 * generated handler module (infra/aws/handler-file.ts: the user's module plus only the poll
 * factory), the same esbuild options as infra/aws/function.ts (CJS, node22, minified, names
 * kept; the AWS SDK and the clients the deployment never connects left external) — then
 * imported by fresh `node` processes. A trivial module is imported the same way, each bundle
 * spawn followed by a baseline spawn, so both see the same load: the difference is what the
 * bundle costs. Medians of IMPORTS spawns each. The bundle sits inside the repo so external
 * modules resolve from node_modules, as the Lambda runtime provides the AWS SDK.
 *
 * `npx tsx bench/cold-import.ts [spawns]` runs this scenario alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { DeploymentConfig } from '../src/deployment/define-config';
import { bundleAliases, bundleExternals, writeHandlerFile } from '../infra/aws/handler-file';

const IMPORTS = 21;
const TIMED_IMPORT = 'const t = performance.now(); await import(process.argv[1]); console.log(`IMPORT_MS ${performance.now() - t}`);';

export interface ColdImport {
  /** Median import time of the poll bundle, ms. */
  readonly medianMs: number;
  readonly samplesMs: number[];
  /** Median import time of a trivial CommonJS module, spawned alternately with the bundle. */
  readonly baselineMedianMs: number;
  readonly baselineSamplesMs: number[];
  /** Minified bundle size, raw and gzip. */
  readonly bundleKiB: number;
  readonly gzipKiB: number;
}

function importOnce(file: string): number {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', TIMED_IMPORT, pathToFileURL(file).href], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('IMPORT_MS '));
  if (run.status !== 0 || !line) throw new Error(`importing ${file} failed: ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return Number(line.slice('IMPORT_MS '.length));
}

const median = (samples: readonly number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

/** The poll function's bundle as `cdk deploy` would build it from `entry` (default export). */
async function bundlePoll(repoDir: string, entry: string, outfile: string): Promise<void> {
  const config = ((await import(pathToFileURL(entry).href)) as { default: DeploymentConfig }).default;
  const handler = writeHandlerFile({ entry, exportName: 'default', role: 'poll', projectRoot: repoDir, runtimeModule: join(repoDir, 'functions', 'aws', 'index.ts') });
  await build({
    entryPoints: [handler],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: ['@aws-sdk/*', ...bundleExternals(config)],
    alias: bundleAliases(),
    minify: true,
    keepNames: true,
    logLevel: 'error',
  });
}

export async function measureColdImport(repoDir: string, benchDir: string, imports = IMPORTS): Promise<ColdImport> {
  mkdirSync(join(benchDir, '.build'), { recursive: true });
  const dir = mkdtempSync(join(benchDir, '.build', 'poll-'));
  try {
    const file = join(dir, 'poll.cjs');
    const baseline = join(dir, 'trivial.cjs');
    await bundlePoll(repoDir, join(repoDir, 'saga.config.ts'), file);
    writeFileSync(baseline, 'module.exports = {};\n');
    const samplesMs: number[] = [];
    const baselineSamplesMs: number[] = [];
    for (let i = 0; i < imports; i++) {
      samplesMs.push(importOnce(file));
      baselineSamplesMs.push(importOnce(baseline));
    }
    const bytes = readFileSync(file);
    return {
      medianMs: median(samplesMs),
      samplesMs,
      baselineMedianMs: median(baselineSamplesMs),
      baselineSamplesMs,
      bundleKiB: Math.round(bytes.length / 1024),
      gzipKiB: Math.round((gzipSync(bytes).length / 1024) * 10) / 10,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const here = dirname(fileURLToPath(import.meta.url));
  const spawns = Number(process.argv[2] ?? IMPORTS);
  const ci = await measureColdImport(join(here, '..'), here, spawns);
  console.log(
    `cold import of the built poll bundle (${ci.bundleKiB} KiB, ${ci.gzipKiB} KiB gzip): median ${ci.medianMs.toFixed(1)} ms; ` +
      `trivial module ${ci.baselineMedianMs.toFixed(1)} ms (${spawns} spawns each, alternating)`,
  );
}
