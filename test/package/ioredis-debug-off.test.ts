/**
 * The Lambda bundles alias ioredis's `debug` to a stub (infra/aws/ioredis-debug-off.cjs,
 * bundleAliases): a bundle built that way still talks to Redis — scripts included — and,
 * with DEBUG=ioredis:* set (which makes the real package log every command), prints nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { bundleAliases } from '../../infra/aws/handler-file';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = `
import { connectIoredis } from ${JSON.stringify(join(ROOT, 'src/node.ts'))};
import { runScript } from ${JSON.stringify(join(ROOT, 'src/redis/script.ts'))};
void (async () => {
  const port = connectIoredis(process.env.REDIS_URL);
  const script = { name: 'echo', sha1: '${'0'.repeat(40)}', text: 'return ARGV[1]' };
  const reply = await runScript(port, { script, keys: [], args: ['through the stub'] });
  console.log(new TextDecoder().decode(reply));
  await port.close();
})();
`;

describe('ioredis in a Lambda bundle without the debug package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saga-debug-off-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a script against Redis and logs nothing under DEBUG=ioredis:*', async () => {
    const result = await build({
      stdin: { contents: ENTRY, resolveDir: ROOT, loader: 'ts' },
      bundle: true,
      write: false,
      // As the construct bundles a Lambda (infra/aws/function.ts).
      format: 'cjs',
      platform: 'node',
      target: 'node22',
      metafile: true,
      logLevel: 'silent',
      alias: bundleAliases(),
    });
    expect(Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/debug/'))).toEqual([]);
    const file = join(dir, 'bundle.cjs');
    writeFileSync(file, result.outputFiles[0]!.contents);
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', env: { PATH: process.env.PATH, REDIS_URL: inject('redisUrl'), DEBUG: 'ioredis:*' }, timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('through the stub');
    expect(run.stderr).toBe('');
  });
});
