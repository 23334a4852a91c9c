/**
 * Acceptance: the package as a user gets it. `npm pack` (after `npm run build`; packed.ts,
 * shared with the scaffold's journey), install the tarball into a fresh project, and use it
 * only through its published entry points: the project type-checks against the shipped
 * .d.ts, the installed bin prints its version and publishes and polls against the private
 * Redis, the Worker and a Lambda bundle from the user's module, and the CDK construct
 * synthesizes offline from it. (`saga-streams init` from it: scaffold-journey.test.ts.)
 *
 * Time: the registry dependencies install from npm's cache (--prefer-offline). Heavy tools
 * the user would have as dev dependencies (typescript, esbuild, aws-cdk-lib, constructs,
 * tsx) are symlinked from this repository's node_modules instead of installed again.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { uniquePrefix } from '../support/redis';
import { packedTarball, REPO, run } from './packed';
import { userProjectFiles } from './user-project';

const SLOW = 600_000;
const DEV_TOOLS = ['typescript', 'esbuild', 'aws-cdk-lib', 'constructs', 'tsx', '@types/node'];
const KEY = 'hex:00112233445566778899aabbccddeeff';

let root: string;
let tarball: string;
let project: string;

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
}

function linkDevTools(dir: string): void {
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  for (const name of DEV_TOOLS) {
    const target = join(dir, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    if (!existsSync(target)) symlinkSync(join(REPO, 'node_modules', name), target, 'dir');
  }
  for (const bin of ['tsc', 'esbuild', 'tsx']) {
    const target = join(dir, 'node_modules', '.bin', bin);
    if (!existsSync(target)) symlinkSync(join(REPO, 'node_modules', '.bin', bin), target);
  }
}

/** Points the project's saga-streams dependency at the tarball (never the registry), then installs. */
function installTarball(dir: string): void {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  manifest.dependencies = { ...manifest.dependencies, 'saga-streams': `file:${tarball}` };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
  linkDevTools(dir);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'saga-streams-pack-'));
  tarball = await packedTarball();
  project = join(root, 'project');
  mkdirSync(project);
  writeFiles(project, userProjectFiles(uniquePrefix()));
  installTarball(project);
}, SLOW);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the build and the bin, and nothing of tests, bench or examples', () => {
    const files = run('tar', ['-tzf', tarball], root).split('\n').filter(Boolean);
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/types/src/index.d.ts');
    expect(files).toContain('package/bin/saga-streams.mjs');
    expect(files.filter((file) => /^package\/(test|bench|examples|src|cli|functions|infra|local)\//.test(file))).toEqual([]);
  });

  it('type-checks a user project against the shipped .d.ts (NodeNext resolution)', () => {
    run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', '.'], project);
  }, SLOW);

  it('runs the installed bin without tsx: --version, publish and poll against Redis', () => {
    const bin = join(project, 'node_modules', '.bin', 'saga-streams');
    const version = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version as string;
    expect(run(bin, ['--version'], project).trim()).toBe(version);
    const env = { REDIS_URL: inject('redisUrl'), ORDERS_SIGNING_KEY: KEY };
    const config = ['--config', 'src/saga.ts', '--json'];
    const published = JSON.parse(run(bin, ['publish', 'order.placed', '--id', 'o-1', '--payload', '{"orderId":"o-1","items":2}', ...config], project, env));
    expect(published).toMatchObject({ event_id: 'o-1', duplicate: false });
    const polled = JSON.parse(run(bin, ['poll', 'fulfilment', '--budget', '3s', ...config], project, env).trim().split('\n').at(-1)!);
    expect(polled).toMatchObject({ consumer: 'fulfilment' });
    expect(JSON.stringify(polled)).toMatch(/"acked":1\b/);
  }, SLOW);

  it('bundles the Worker and the Lambda handlers from the user module', () => {
    const esbuild = join(project, 'node_modules', '.bin', 'esbuild');
    run(esbuild, ['src/worker.ts', '--bundle', '--format=esm', '--platform=neutral', '--conditions=workerd,worker,browser', '--main-fields=module,main', '--metafile=out/worker.json', '--outfile=out/worker.js'], project);
    run(esbuild, ['src/lambda.ts', '--bundle', '--format=cjs', '--platform=node', '--target=node22', '--external:@aws-sdk/*', '--outfile=out/lambda.cjs'], project);
    const worker = readFileSync(join(project, 'out', 'worker.js'), 'utf8');
    expect(worker).toContain('user-shop');
    const inputs = Object.keys((JSON.parse(readFileSync(join(project, 'out', 'worker.json'), 'utf8')) as { inputs: object }).inputs);
    expect(inputs.some((input) => input.includes('node_modules/saga-streams/dist/'))).toBe(true);
    expect(inputs.filter((input) => input.includes('node_modules/ioredis'))).toEqual([]);
    expect(Object.keys(JSON.parse(run('node', ['-e', 'console.log(JSON.stringify(Object.fromEntries(Object.keys(require("./out/lambda.cjs")).map((k) => [k, 1]))))'], project)))).toEqual(
      expect.arrayContaining(['poll', 'trim', 'publish', 'wakeUp']),
    );
  }, SLOW);

  it('synthesizes the CDK construct offline from the user module, bundling that module', () => {
    const home = join(root, 'home');
    mkdirSync(home, { recursive: true });
    const out = JSON.parse(run('node', ['synth.mjs'], project, { TMPDIR: home, HOME: home, CDK_OUTDIR: join(root, 'cdk.out') }).trim().split('\n').at(-1)!);
    expect(out.functions).toEqual(['poll', 'publish', 'trim']);
    const bundles = readdirSync(out.directory).filter((name) => name.startsWith('asset.') && existsSync(join(out.directory, name, 'index.js')));
    expect(bundles).toHaveLength(3);
    for (const dir of bundles) expect(readFileSync(join(out.directory, dir, 'index.js'), 'utf8')).toContain('user-shop');
  }, SLOW);
});
