import { defineConfig } from 'vitest/config';

export default defineConfig({
  // tsconfig.json's `paths`: the example package imports `saga-streams` by name, resolved to the sources.
  resolve: { tsconfigPaths: true },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/postgres-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
