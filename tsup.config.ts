/**
 * The published JavaScript: ESM per subpath, like Hono's adapters. tsup (esbuild) rather than
 * plain tsc because the sources import without file extensions (moduleResolution Bundler),
 * which Node's ESM loader cannot resolve in tsc output; tsup bundles each entry, and
 * `splitting` puts code shared by several subpaths into shared chunks, so a class (e.g.
 * `Rejection`) is one class whichever subpath it came through. Dependencies stay external:
 * the user's bundler (wrangler, NodejsFunction) tree-shakes them.
 * Types come from `tsc --emitDeclarationOnly` (tsconfig.build.json, then
 * scripts/fix-dts-extensions.mjs): tsup's rollup-plugin-dts took 5 minutes here, tsc seconds.
 */
import { copyFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

export const ENTRIES = {
  index: 'src/index.ts',
  node: 'src/node.ts',
  http: 'src/http/index.ts',
  aws: 'functions/aws/index.ts',
  cloudflare: 'functions/cloudflare/index.ts',
  cdk: 'infra/aws/index.ts',
  internal: 'src/internal.ts',
  postgres: 'src/postgres/index.ts',
  'postgres-pglite': 'src/postgres/pglite.ts',
  cli: 'cli/main.ts',
};

export default defineConfig({
  entry: ENTRIES,
  format: ['esm'],
  target: 'node20',
  platform: 'neutral',
  dts: false,
  splitting: true,
  treeshake: true,
  sourcemap: true,
  clean: true,
  outDir: 'dist',
  // Error classes name themselves from their constructor: keep names through minifiers.
  keepNames: true,
  external: [/^node:/, 'aws-cdk-lib', 'constructs', /^@aws-sdk\//],
  // The construct's bundles alias `debug` to this stub, found beside its own chunk (handler-file.ts).
  onSuccess: async () => copyFileSync('infra/aws/ioredis-debug-off.cjs', 'dist/ioredis-debug-off.cjs'),
});
