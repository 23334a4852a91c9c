/**
 * Cold import of the built poll bundle (issue 14): the AWS poll entry point bundled the way
 * the CDK stack bundles it (infra/aws/function.ts: CJS, minified, names kept, the AWS SDK
 * left to the runtime), then imported by a fresh `node` five times; the median is reported.
 * The bundle sits inside the repo so the AWS SDK resolves from node_modules, as the Lambda
 * runtime provides it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const IMPORTS = 5;
const TIMED_IMPORT = 'const t = performance.now(); await import(process.argv[1]); console.log(`IMPORT_MS ${performance.now() - t}`);';

export interface ColdImport {
  readonly medianMs: number;
  readonly samplesMs: number[];
  readonly bundleKiB: number;
}

function importOnce(file: string): number {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', TIMED_IMPORT, pathToFileURL(file).href], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('IMPORT_MS '));
  if (run.status !== 0 || !line) throw new Error(`importing the poll bundle failed: ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return Number(line.slice('IMPORT_MS '.length));
}

export async function measureColdImport(repoDir: string, benchDir: string): Promise<ColdImport> {
  mkdirSync(join(benchDir, '.build'), { recursive: true });
  const dir = mkdtempSync(join(benchDir, '.build', 'poll-'));
  try {
    const file = join(dir, 'poll.cjs');
    await build({
      entryPoints: [join(repoDir, 'functions', 'aws', 'handlers.ts')],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['@aws-sdk/*'],
      minify: true,
      keepNames: true,
      logLevel: 'error',
    });
    const samplesMs = Array.from({ length: IMPORTS }, () => importOnce(file));
    const sorted = [...samplesMs].sort((a, b) => a - b);
    return { medianMs: sorted[Math.floor(IMPORTS / 2)]!, samplesMs, bundleKiB: Math.round(statSync(file).size / 1024) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
