/**
 * `npm run bench -- --scale [--quick] [--against REV]`: the scale-out cases alone (issue 24),
 * on a private redis-server and 3-master Cluster: 1, 2 and 4 processes on one stream and one
 * process per master, the product and `raw_verify` back to back at each count, with Redis's
 * and Node's CPU per entry beside the entries/s. With `--against REV`, the product of another
 * revision (its own bench child, bundled from a git worktree) runs beside this one's, the two
 * alternating case by case, so a load change hits both alike: the paired comparison issue 24
 * asks for, without a second full bench.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, startRedisServer } from '../local/redis-server';
import { prefillStream, resetGroup, tagsOnEachMaster } from './fixtures';
import { SCALE_BATCH, SCALE_PROCESSES, SIZES, WARM_STREAM_ENTRIES, warmupEntries, type Plan } from './plan';
import { openRedisMeter, withRedisFigures, type RedisMeter } from './redis-meter';
import { printScaleFigures } from './report';
import type { ScenarioResult } from './scenarios/types';
import { bundleChild, runSideBySide } from './spawn';

const GROUP = 'bench';
const STREAM = 'bench:scale';
const WARM_STREAM = 'bench:warm:300B';

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const eps = (r: ScenarioResult) => r.entries / r.seconds;

interface Contender {
  /** Suffix of the case names: '' for this tree, `@REV` for the other. */
  readonly suffix: string;
  readonly childFile: string;
}

/**
 * Another revision's bench child: a detached worktree under bench/.build (this tree's
 * node_modules linked in, so its bundle resolves the same packages), bundled by its own code.
 */
async function otherRevision(benchDir: string, revision: string): Promise<{ contender: Contender; cleanup: () => void }> {
  let commit: string;
  try {
    commit = execFileSync('git', ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], { cwd: benchDir, encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`--against ${revision}: not a commit of this repository (git rev-parse found none)`);
  }
  const tree = join(benchDir, '.build', `against-${commit.slice(0, 12)}`);
  if (!existsSync(tree)) execFileSync('git', ['worktree', 'add', '--detach', tree, commit], { cwd: benchDir, stdio: 'ignore' });
  const modules = join(tree, 'node_modules');
  if (!existsSync(modules)) symlinkSync(join(benchDir, '..', 'node_modules'), modules);
  const { bundleChild: bundleOther } = (await import(join(tree, 'bench', 'spawn.ts'))) as typeof import('./spawn');
  const bundle = await bundleOther(join(tree, 'bench'));
  const cleanup = () => {
    bundle.cleanup();
    execFileSync('git', ['worktree', 'remove', '--force', tree], { cwd: benchDir, stdio: 'ignore' });
  };
  return { contender: { suffix: `@${revision}`, childFile: bundle.file }, cleanup };
}

/** What the scale-out cases run with: `npm run bench` and `--scale` each pass their own. */
export interface ScaleContext {
  readonly plan: Plan;
  readonly admin: Redis;
  readonly clusterAdmin: Cluster;
  readonly serverUrl: string;
  readonly clusterNodes: ReadonlyArray<{ host: string; port: number }>;
  readonly serverMeter: RedisMeter;
  readonly clusterMeter: RedisMeter;
  readonly record: (name: string, result: ScenarioResult) => void;
  /** A warm-up job on its own group of `stream` (prefilled with WARM_STREAM_ENTRIES entries). */
  readonly warmupOf: (redis: Redis | Cluster, stream: string, params: object) => Promise<object>;
}

export interface ScaleCases {
  /** `processes` children of `childFile` sharing one stream and one group. */
  onOneStream(name: string, childFile: string, scenario: string, processes: number): Promise<void>;
  /** One child of `childFile` per Cluster master, each on a stream of its own. */
  onCluster(name: string, childFile: string, scenario: string): Promise<void>;
}

/** Prefills the scale-out streams (one on the server, one per Cluster master with its warm-up stream) and returns the cases. */
export async function prepareScaleCases(ctx: ScaleContext): Promise<ScaleCases> {
  const { plan, admin, clusterAdmin } = ctx;
  await prefillStream(admin, STREAM, plan.scale, SIZES['300B']);
  const clusterStreams = (await tagsOnEachMaster(clusterAdmin, 3)).map((tag) => `bench:{${tag}}`);
  for (const stream of clusterStreams) {
    await prefillStream(clusterAdmin, stream, plan.clusterPerStream, SIZES['300B']);
    await prefillStream(clusterAdmin, `${stream}:warm`, WARM_STREAM_ENTRIES, SIZES['300B']);
  }
  const described = (name: string, r: ScenarioResult) =>
    `${name}: ${Math.round(eps(r))} entries/s aggregate, Redis ${r.redis?.cpuMicrosPerEntry.toFixed(2)} µs/entry, Node ${r.extra?.nodeCpuMicrosPerEntry?.toFixed(1)} µs/entry`;
  return {
    async onOneStream(name, childFile, scenario, processes) {
      await resetGroup(admin, STREAM, GROUP);
      const jobs: object[] = [];
      for (let i = 0; i < processes; i += 1) {
        const params = { redisUrl: ctx.serverUrl, group: GROUP, stream: STREAM, count: plan.scale, batch: SCALE_BATCH, consumer: `${scenario}-${i}`, shared: true };
        jobs.push({ scenario, params, warmup: await ctx.warmupOf(admin, WARM_STREAM, params) });
      }
      const aggregate = await withRedisFigures(ctx.serverMeter, async (atStart) => (await runSideBySide(childFile, jobs, atStart)).aggregate);
      if (aggregate.entries !== plan.scale) throw new Error(`${name}: ${aggregate.entries} of ${plan.scale} entries handled`);
      ctx.record(name, aggregate);
      progress(described(name, aggregate));
    },
    async onCluster(name, childFile, scenario) {
      const jobs: object[] = [];
      for (const stream of clusterStreams) {
        await resetGroup(clusterAdmin, stream, GROUP);
        const params = { redisUrl: ctx.serverUrl, group: GROUP, clusterNodes: ctx.clusterNodes, stream, count: plan.clusterPerStream, batch: SCALE_BATCH };
        jobs.push({ scenario, params, warmup: await ctx.warmupOf(clusterAdmin, `${stream}:warm`, params) });
      }
      const aggregate = await withRedisFigures(ctx.clusterMeter, async (atStart) => (await runSideBySide(childFile, jobs, atStart)).aggregate);
      ctx.record(name, aggregate);
      progress(described(name, aggregate));
    },
  };
}

export async function scaleAlone(benchDir: string, plan: Plan, against?: string): Promise<void> {
  // The other revision first: a name git does not know fails here, with nothing to clean up.
  const other = against === undefined ? undefined : await otherRevision(benchDir, against);
  const bundle = await bundleChild(benchDir);
  const contenders: Contender[] = [{ suffix: '', childFile: bundle.file }, ...(other ? [other.contender] : [])];
  const server = await startRedisServer();
  const redisCluster = await startRedisCluster(3);
  const serverMeter = openRedisMeter([{ host: server.host, port: server.port }]);
  const clusterMeter = openRedisMeter(redisCluster.nodes);
  const admin = new Redis(server.url);
  const clusterAdmin = new Cluster([...redisCluster.nodes]);
  const figures = new Map<string, ScenarioResult[]>();
  const loadAtStart = loadavg();
  let warmGroups = 0;
  // Every child warms up on its own group of a warm-up stream, so each gets the whole warm-up.
  const warmupOf = async (redis: Redis | Cluster, stream: string, params: object) => {
    const group = `warm-${(warmGroups += 1)}`;
    await redis.xgroup('CREATE', stream, group, '0-0');
    return { ...params, stream, group, count: warmupEntries(SCALE_BATCH), shared: false };
  };
  try {
    progress(`prefilling signed entries (${plan.scale} on one stream, ${plan.clusterPerStream} on each Cluster stream)`);
    await prefillStream(admin, WARM_STREAM, WARM_STREAM_ENTRIES, SIZES['300B']);
    const cases = await prepareScaleCases({
      plan,
      admin,
      clusterAdmin,
      serverUrl: server.url,
      clusterNodes: redisCluster.nodes,
      serverMeter,
      clusterMeter,
      record: (name, result) => figures.set(name, [...(figures.get(name) ?? []), result]),
      warmupOf,
    });
    for (let rep = 0; rep < plan.reps; rep += 1) {
      progress(`repetition ${rep + 1}/${plan.reps} (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
      // The contenders swap order every repetition: neither always runs right after raw_verify.
      const order = rep % 2 === 0 ? contenders : [...contenders].reverse();
      for (const processes of SCALE_PROCESSES) {
        for (const { suffix, childFile } of order) await cases.onOneStream(`scale_${processes}${suffix}`, childFile, 'product', processes);
        await cases.onOneStream(`scale_raw_verify_${processes}`, bundle.file, 'raw-verify', processes);
      }
      for (const { suffix, childFile } of order) await cases.onCluster(`scale_cluster3${suffix}`, childFile, 'product');
      await cases.onCluster('scale_raw_verify_cluster3', bundle.file, 'raw-verify');
    }
  } finally {
    admin.disconnect();
    clusterAdmin.disconnect();
    serverMeter.close();
    clusterMeter.close();
    await server.stop();
    await redisCluster.stop();
    bundle.cleanup();
    other?.cleanup();
  }
  printScaleFigures(figures, [loadAtStart, loadavg()], against === undefined ? undefined : `@${against}`);
}
