/** The package's subpaths and the source module each is built from (tsup.config.ts ENTRIES). */
export const SUBPATHS = {
  'saga-streams': '../../src/index.ts',
  'saga-streams/node': '../../src/node.ts',
  'saga-streams/http': '../../src/http/index.ts',
  'saga-streams/aws': '../../functions/aws/index.ts',
  'saga-streams/cloudflare': '../../functions/cloudflare/index.ts',
  'saga-streams/cdk': '../../infra/aws/index.ts',
  'saga-streams/internal': '../../src/internal.ts',
  'saga-streams/postgres': '../../src/postgres/index.ts',
  'saga-streams/postgres/pglite': '../../src/postgres/pglite.ts',
} as const;
