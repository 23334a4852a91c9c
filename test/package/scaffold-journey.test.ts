/**
 * Acceptance: the scaffold's journey as a new user takes it, before saga-streams is on the
 * npm registry. The packed package (packed.ts) installed into a tools folder; `saga-streams
 * init` from there writes a project that depends on that tarball and says so; `npm install`
 * (the registry only for the package's own dependencies, from npm's cache when it can) and
 * the scaffold's own tests pass; its `npm start` — the stack with its private redis-server —
 * stopped by SIGTERM to npm, and separately by SIGINT to npm, leaves no process of its
 * process group running and nothing answering on its ports. Also `init` run from this
 * checkout: it builds and packs the checkout into the project's vendor/, which installs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { groupEnds, killGroup, livePidsInGroup, portAnswers } from '../local/processes';
import { packedTarball, REPO, run, withBuildLock } from './packed';

const SLOW = 600_000;
const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];
const STOP_MS = 15_000;

let root: string;
let tarball: string;
let shop: string;
let initOutput: string;

/** A user's environment: no REDIS_URL or DATABASE_URL of the test run's. */
function userEnv(): NodeJS.ProcessEnv {
  const { REDIS_URL: _redis, DATABASE_URL: _database, ...env } = process.env;
  return env;
}

function timed<T>(what: string, action: () => T): T {
  const started = performance.now();
  try {
    return action();
  } finally {
    console.log(`${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'saga-streams-journey-'));
  tarball = await packedTarball();
  // As a user tries a tarball: install it into a folder, run its bin (npx does the same, in its cache).
  const tools = join(root, 'tools');
  mkdirSync(tools);
  writeFileSync(join(tools, 'package.json'), '{ "name": "tools", "private": true }\n');
  timed('npm install of the tarball into tools/', () => run('npm', [...NPM_INSTALL, tarball], tools));
  initOutput = run(join(tools, 'node_modules', '.bin', 'saga-streams'), ['init', 'shop', '--platform', 'cloudflare'], root);
  shop = join(root, 'shop');
}, SLOW);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the scaffold, from the packed package', () => {
  it('depends on the tarball init was installed from, and says so in its output and README', () => {
    const manifest = JSON.parse(readFileSync(join(shop, 'package.json'), 'utf8'));
    expect(manifest.dependencies['saga-streams']).toBe(`file:${tarball}`);
    expect(manifest.scripts.start).toBe('exec saga-streams dev --no-demo');
    const note = /is not on the npm registry yet, so package\.json depends on file:\S+ \(the tarball this saga-streams was installed from\)/;
    expect(initOutput).toMatch(note);
    expect(readFileSync(join(shop, 'README.md'), 'utf8').replaceAll('`', '')).toMatch(note);
  });

  it('installs, and its own tests pass; its wrangler.toml is what saga-streams wrangler derives', () => {
    timed('npm install of the scaffold', () => run('npm', NPM_INSTALL, shop));
    expect(run('npm', ['test'], shop)).toMatch(/# pass 3\n# fail 0/);
    const generated = run(join(shop, 'node_modules', '.bin', 'saga-streams'), ['wrangler', '--main', 'src/worker.ts'], shop);
    expect(generated.trim()).toBe(readFileSync(join(shop, 'wrangler.toml'), 'utf8').trim());
  }, SLOW);

  describe('npm start, stopped through npm', () => {
    let group: number | undefined;
    afterEach(() => killGroup(group));

    it.each(['SIGTERM', 'SIGINT'] as const)('%s to npm stops the whole stack, its private redis-server included', async (signal) => {
      // Its own process group, as a terminal or a process manager gives it: npm, node, redis-server.
      const npm = spawn('npm', ['start', '--', '--port', '0'], { cwd: shop, env: userEnv(), detached: true });
      group = npm.pid!;
      let stderr = '';
      npm.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start line within 60 s; stderr:\n${stderr}`)), 60_000);
        // npm prints its own banner lines on stdout too: the stack's lines are the JSON ones.
        createInterface({ input: npm.stdout }).on('line', (text) => {
          const line = text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined;
          if (line?.msg === 'local stack started') (clearTimeout(timer), resolve(line));
        });
        void exited.then((code) => reject(new Error(`npm start exited (${code}) before starting; stderr:\n${stderr}`)));
      });
      const { api, redis } = started.detail as { api: string; redis: string };
      expect(started).toMatchObject({ deployment: 'shop', detail: { privateRedis: true } });
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
      const ports = [Number(new URL(api).port), Number(new URL(redis).port)];
      expect(await Promise.all(ports.map(portAnswers))).toEqual([true, true]);
      expect(livePidsInGroup(group).length).toBeGreaterThanOrEqual(3); // npm, node, redis-server (and sh, on the old script)

      process.kill(npm.pid!, signal); // npm alone, as `kill` or a process manager does
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve(`npm still running ${STOP_MS} ms after ${signal}`), STOP_MS))]);
      expect(code).toBe(0);
      await groupEnds(group, STOP_MS);
      expect(await Promise.all(ports.map(portAnswers))).toEqual([false, false]);
      expect(stderr).toContain('stopping…');
    }, 120_000);
  });
});

describe('init from this checkout', () => {
  it('builds and packs the checkout into the project, which installs and passes its tests', async () => {
    const dir = join(root, 'from-checkout');
    mkdirSync(dir);
    // It rebuilds this repository's dist/: not while packed.ts builds it for another file.
    const output = await withBuildLock(() => timed('init from the checkout', () => run(process.execPath, [join(REPO, 'bin', 'saga-streams.mjs'), 'init', 'shop', '--platform', 'cloudflare'], dir)));
    const project = join(dir, 'shop');
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies['saga-streams']).toBe(`file:vendor/saga-streams-${version}.tgz`);
    expect(output).toContain(`is not on the npm registry yet, so package.json depends on file:vendor/saga-streams-${version}.tgz (the checkout ${REPO.replace(/\/$/, '')}, built and packed into vendor/ by init)`);
    expect(run('tar', ['-tzf', join(project, 'vendor', `saga-streams-${version}.tgz`)], dir)).toContain('package/dist/cli.js');
    timed('npm install of the scaffold made from the checkout', () => run('npm', NPM_INSTALL, project));
    expect(run('npm', ['test'], project)).toMatch(/# pass 3\n# fail 0/);
  }, SLOW);
});
