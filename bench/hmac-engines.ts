/**
 * `npx tsx bench/hmac-engines.ts [reps]`: issue 15 item 4, per-entry work measured end to
 * end. The product scenario (drain, batch 100 and 500, 300 B, signatures verified) runs
 * with each HMAC engine in back-to-back children, the order alternating per repetition, and
 * each repetition's ratio is taken pair by pair, so a load change on a shared machine hits
 * both sides alike. Prints the median ratio of throughput and of the child's Node CPU per
 * entry (the process's own work, far steadier than wall time on a loaded machine), and the
 * load average of every repetition.
 */
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../local/redis-server';
import { prefillStream, resetGroup } from './fixtures';
import { SIZES, WARMUP } from './plan';
import type { ScenarioResult } from './scenarios/types';
import { bundleChild, runChild } from './spawn';

const here = dirname(fileURLToPath(import.meta.url));
const reps = Number(process.argv[2] ?? 6);
const ENTRIES = Number(process.argv[3] ?? 20_000);
/** Variant name → the product's `hmac` param and extra environment of the child. */
const VARIANTS: Record<string, { hmac: 'fast' | 'plain'; env?: Record<string, string> }> = {
  fast: { hmac: 'fast' },
  plain: { hmac: 'plain' },
};

/** The textbook path every other variant is compared with. */
const BASELINE = 'plain-fresh' in VARIANTS ? 'plain-fresh' : 'plain';

const eps = (r: ScenarioResult) => r.entries / r.seconds;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const bundle = await bundleChild(here);
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  const rates = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  try {
    await prefillStream(admin, 'bench:300B', ENTRIES, SIZES['300B']);
    await prefillStream(admin, 'bench:warm', WARMUP['300B'], SIZES['300B']);
    const names = Object.keys(VARIANTS);
    for (let rep = 0; rep < reps; rep += 1) {
      const load = loadavg()[0]!.toFixed(2);
      const order = rep % 2 === 0 ? names : [...names].reverse();
      const line: string[] = [];
      for (const batch of [100, 500]) {
        for (const name of order) {
          const variant = VARIANTS[name]!;
          await resetGroup(admin, 'bench:300B', 'bench');
          await resetGroup(admin, 'bench:warm', 'bench');
          const base = { redisUrl: server.url, group: 'bench', batch, hmac: variant.hmac };
          Object.assign(process.env, variant.env ?? {});
          const result = await runChild(bundle.file, {
            scenario: 'product',
            params: { ...base, stream: 'bench:300B', count: ENTRIES },
            warmup: { ...base, stream: 'bench:warm', count: WARMUP['300B'] },
          });
          for (const key of Object.keys(variant.env ?? {})) delete process.env[key];
          const key = `${name}_b${batch}`;
          rates.set(key, [...(rates.get(key) ?? []), eps(result)]);
          cpu.set(key, [...(cpu.get(key) ?? []), result.extra!.nodeCpuMicrosPerEntry!]);
          line.push(`${key} ${Math.round(eps(result))}/s ${result.extra!.nodeCpuMicrosPerEntry!.toFixed(2)} µs`);
        }
      }
      console.log(`rep ${rep + 1} (load ${load}): ${line.join(', ')}`);
    }
    for (const batch of [100, 500]) {
      const baseline = rates.get(`${BASELINE}_b${batch}`)!;
      for (const name of names.filter((n) => n !== BASELINE)) {
        const ratios = rates.get(`${name}_b${batch}`)!.map((x, i) => x / baseline[i]!);
        const cpuBase = cpu.get(`${BASELINE}_b${batch}`)!;
        const cpuRatios = cpu.get(`${name}_b${batch}`)!.map((x, i) => x / cpuBase[i]!);
        console.log(`${name} / ${BASELINE}, b${batch}: entries/s median ${median(ratios).toFixed(3)} [${ratios.map((r) => r.toFixed(3)).join(', ')}]`);
        console.log(`${name} / ${BASELINE}, b${batch}: Node CPU per entry median ${median(cpuRatios).toFixed(3)} [${cpuRatios.map((r) => r.toFixed(3)).join(', ')}]`);
      }
    }
    console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    admin.disconnect();
    await server.stop();
    bundle.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
