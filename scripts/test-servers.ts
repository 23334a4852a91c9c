/**
 * `npm run test:servers [-- --subset] [-- --skip-default]`: the Redis-facing suites once per
 * server binary on this machine (Redis 7.x, Valkey 8.x, any other found), each pass starting
 * its private servers — standalone, Cluster, replicas — from that binary through
 * SAGA_REDIS_SERVER (local/redis-server.ts). Prints the server and version of each pass and
 * what passed; exits 1 if any pass failed or no server was found.
 *
 * Found: `redis-server` and `valkey-server` on PATH and in /usr/bin and /usr/local/bin, plus
 * the paths in SAGA_TEST_SERVERS (comma-separated: e.g. a Redis 7.4 built under /opt); one
 * pass per distinct binary (a symlink counts once).
 *
 * A pass runs:
 *   (default)       the `integration` project — every Redis-facing suite: clients, scripts,
 *                   Cluster, REST, server capabilities and durability, publish API, dashboard,
 *                   CLI, functions — and the bounded chaos run (test/chaos/chaos.test.ts);
 *   --subset        only the suites that exercise server behaviour: test/redis, test/rest,
 *                   test/servers, and the bounded chaos scenarios whose faults are the
 *                   server's own (redis-kill, cluster-failover, retention) — what .ci/run runs,
 *                   to stay in time;
 *   --skip-default  no pass for the binary `npm test` starts (`redis-server` on PATH), e.g.
 *                   right after `npm test` in CI.
 * REDIS_URL and REDIS_CLUSTER_NODES are removed from the passes' environment: a pass tests the
 * binary it names, never a server you run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findServerBinaries, REDIS_SERVER_ENV, type ServerBinary } from '../local/redis-server';

const OPTIONS = ['--subset', '--skip-default'];
const SUBSET = ['test/redis/', 'test/rest/', 'test/servers/'];
const CHAOS = 'test/chaos/chaos.test.ts';
/** The chaos scenarios whose faults are the server's own: AOF replay after kill -9, failover, trim and reaper. */
const SERVER_SCENARIOS = ['redis-kill', 'cluster-failover', 'retention'];

interface Counts {
  readonly files: number;
  readonly filesPassed: number;
  readonly tests: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

interface PassResult extends Counts {
  readonly label: string;
  readonly ok: boolean;
  readonly seconds: number;
}

interface JsonReport {
  readonly testResults: ReadonlyArray<{ readonly status: string }>;
  readonly numTotalTests: number;
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests?: number;
}

const NO_COUNTS: Counts = { files: 0, filesPassed: 0, tests: 0, passed: 0, failed: 0, skipped: 0 };

/** One vitest invocation: its output as usual, its counts from the JSON reporter. */
function vitest(env: NodeJS.ProcessEnv, args: readonly string[]): Counts & { ok: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'saga-test-servers-'));
  const file = join(dir, 'report.json');
  try {
    const run = spawnSync('npx', ['vitest', 'run', ...args, '--reporter=default', '--reporter=json', `--outputFile.json=${file}`], { env, stdio: 'inherit' });
    let counts = NO_COUNTS;
    try {
      const report = JSON.parse(readFileSync(file, 'utf8')) as JsonReport;
      counts = {
        files: report.testResults.length,
        filesPassed: report.testResults.filter((result) => result.status === 'passed').length,
        tests: report.numTotalTests,
        passed: report.numPassedTests,
        failed: report.numFailedTests,
        skipped: report.numPendingTests + (report.numTodoTests ?? 0),
      };
    } catch {
      // No report: vitest failed before running a test; its output above says why.
    }
    return { ...counts, ok: run.status === 0 && counts.failed === 0 && counts.tests > 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runPass(server: ServerBinary, subset: boolean): PassResult {
  const env: NodeJS.ProcessEnv = { ...process.env, [REDIS_SERVER_ENV]: server.path };
  delete env.REDIS_URL;
  delete env.REDIS_CLUSTER_NODES;
  const label = `${server.family} ${server.version} (${server.path})`;
  console.log(`\n==== test:servers: ${label}${subset ? ', server-behaviour subset' : ''} ====\n`);
  const started = Date.now();
  const suites = vitest(env, ['--project', 'integration', ...(subset ? SUBSET : [])]);
  const scenarios = subset ? ['-t', `'(${SERVER_SCENARIOS.join('|')})':`] : [];
  const chaos = vitest(env, ['--project', 'acceptance', CHAOS, ...scenarios]);
  const sum = (key: keyof Counts) => suites[key] + chaos[key];
  return {
    label,
    ok: suites.ok && chaos.ok,
    files: sum('files'),
    filesPassed: sum('filesPassed'),
    tests: sum('tests'),
    passed: sum('passed'),
    failed: sum('failed'),
    skipped: sum('skipped'),
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

/** The binary `npm test` starts: `redis-server` as PATH resolves it. */
function defaultBinary(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
  return which === '' ? undefined : realpathSync(which);
}

function main(argv: readonly string[]): number {
  const unknown = argv.filter((arg) => !OPTIONS.includes(arg));
  if (unknown.length > 0) {
    console.error(`test:servers: unknown option ${unknown.join(' ')} (known: ${OPTIONS.join(', ')})`);
    return 2;
  }
  const extra = (process.env.SAGA_TEST_SERVERS ?? '').split(',').map((path) => path.trim()).filter(Boolean);
  const skip = argv.includes('--skip-default') ? defaultBinary() : undefined;
  const servers = findServerBinaries(extra).filter((server) => realpathSync(server.path) !== skip);
  if (servers.length === 0) {
    console.error(`test:servers: no server binary to test (looked for redis-server and valkey-server on PATH, in /usr/bin and /usr/local/bin${skip ? `; skipped ${skip}` : ''})`);
    return 1;
  }
  console.log(`test:servers: ${servers.map((s) => `${s.family} ${s.version}`).join(', ')}${skip ? ` (not ${skip}: npm test ran it)` : ''}`);

  const results = servers.map((server) => runPass(server, argv.includes('--subset')));
  console.log('\n==== test:servers summary ====');
  for (const r of results) {
    const skipped = r.skipped > 0 ? `, ${r.skipped} skipped` : '';
    console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.label}: ${r.filesPassed}/${r.files} files, ${r.passed}/${r.tests} tests passed, ${r.failed} failed${skipped}, ${r.seconds} s`);
  }
  const total = (key: 'passed' | 'failed') => results.reduce((n, r) => n + r[key], 0);
  // The plain closing line CI reads.
  console.log(`${total('passed')} passed, ${total('failed')} failed`);
  return results.every((r) => r.ok) ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
