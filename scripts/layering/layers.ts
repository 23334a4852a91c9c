/**
 * The layers of the repository, lowest first: a module may import its own layer and the
 * layers below it, never one above. test/package/layering.test.ts holds the tree to this.
 *
 *   ground ← port/auth ← core ← http/deployment ← functions/cli/local ← infra ← app
 *
 * A file belongs to the layer whose member is the longest prefix of its path (a member ending
 * in `/` is a folder, any other is one file), so `src/` is "the rest of src" and the named
 * folders and files carve their layers out of it. A scanned file no member covers is itself a
 * failure: a new folder is placed here on purpose, not by default.
 */

export interface Layer {
  readonly name: string;
  /** Folders (ending in `/`) and files, relative to the repository root. */
  readonly members: readonly string[];
}

export const LAYERS: readonly Layer[] = [
  {
    // The leaf: errors, time limits, bytes to text, zod issues as ConfigProblems, and two
    // language-level helpers. Imports nothing of the repository, so anything may import it.
    name: 'ground',
    members: ['src/ground/'],
  },
  {
    // The Redis port (ioredis and Upstash adapters, reply decoding) and the auth primitives
    // (keys, modes, canonical encoding, HMAC, signatures, and Node's HMAC engine): they speak
    // bytes and keys, never entries or verdicts.
    name: 'port/auth',
    members: ['src/redis/', 'src/auth/', 'src/node/'],
  },
  {
    // Entries, verdicts, rounds, settle, the poller, admission (origin checks turned into
    // verdicts), saga consumers, publish, retention, redrive, the backlog and readiness probes,
    // telemetry and the Lua scripts.
    // src/postgres/ is a second store, but its relay publishes through the core's publisher,
    // so it sits here rather than beside the Redis port.
    name: 'core',
    members: ['src/'],
  },
  {
    // What a deployment is made of: the deployment config, runtime and jobs (the consumer
    // backlog of a deployment included), the Hono publish app, the dashboard (its contract
    // reads the deployment runtime), the HTTP plumbing both apps answer with (src/web:
    // problem+json and the request logger; the publish app mounts the dashboard, so the
    // dashboard cannot import them from src/http), and the package's entry barrels, which
    // re-export all of the above.
    name: 'http/deployment',
    members: ['src/deployment/', 'src/http/', 'src/dashboard/', 'src/web/', 'src/index.ts', 'src/internal.ts', 'src/node.ts'],
  },
  {
    // Platform entry points, the CLI and the local stack: they run a deployment. The CLI may
    // start the local stack and render the Worker's wrangler.toml (same layer, no cycle).
    name: 'functions/cli/local',
    members: ['functions/', 'cli/', 'local/'],
  },
  {
    // Deploy code: the CDK construct bundles functions/, the Cloudflare check reads them.
    name: 'infra',
    members: ['infra/'],
  },
  {
    // The repository's own example deployment, a consumer of everything above: the example
    // saga, its config, and the two entry files the repository deploys it with (not shipped,
    // see tsconfig.build.json).
    name: 'app',
    members: ['examples/', 'saga.config.ts', 'functions/aws/handlers.ts', 'functions/cloudflare/worker.ts'],
  },
];

/** What the check reads: every module a user or a deployment can load, and the example. */
export const SCANNED = ['src', 'functions', 'cli', 'local', 'infra', 'examples', 'saga.config.ts'] as const;
