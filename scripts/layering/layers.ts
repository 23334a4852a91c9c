/**
 * The layers of the repository, lowest first: a module may import its own layer and the
 * layers below it, never one above. test/package/layering.test.ts holds the tree to this.
 *
 *   ground ← port/auth ← model ← telemetry ← consume ← admission ← publish ← saga
 *     ← http/deployment ← functions/cli/local ← infra ← app
 *
 * Every member is a folder (ending in `/`) or a file, named on purpose: there is no
 * catch-all, so a new folder, or a file at the root of src/, belongs to no layer until it is
 * placed here — the check fails for it. A file belongs to the layer whose member is the
 * longest prefix of its path.
 */

export interface Layer {
  readonly name: string;
  /** Folders (ending in `/`) and files, relative to the repository root. */
  readonly members: readonly string[];
}

export const LAYERS: readonly Layer[] = [
  {
    // The leaf: errors, time limits, bytes to text, base64, zod issues as ConfigProblems, and
    // two language-level helpers. Imports nothing of the repository, so anything may import it.
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
    // The entry model (an entry and its fields, key names, markers, hash tags, the size keys
    // writers and claims share), the closed verdicts with the core's reasons, and the Lua
    // scripts compiled into a module.
    name: 'model',
    members: ['src/entry/', 'src/verdict/', 'src/generated/'],
  },
  {
    // Trace spans around runs, entries, publishes and requests: they read entries and verdicts.
    name: 'telemetry',
    members: ['src/telemetry/'],
  },
  {
    // The consuming engine: consumer config, claim, decide, the exchange codec, settle,
    // release, sizing, the reclaim cadence, the run loop and its reports, and the poller.
    name: 'consume',
    members: ['src/consume/'],
  },
  {
    // Turning an entry's origin (signature, key id, producer) into a verdict before a handler.
    name: 'admission',
    members: ['src/admission/'],
  },
  {
    // What else talks to streams: the publisher, the schedule of scheduled events (due times,
    // move, list, cancel), retention (trim, DLT, reaper), redrive and the backlog and
    // readiness probes.
    name: 'publish',
    members: ['src/publish/', 'src/schedule/', 'src/retention/', 'src/redrive/', 'src/probes/'],
  },
  {
    // Saga envelopes and consumers (admission + the poller), and the Postgres inbox and outbox
    // (its relay publishes through the publisher).
    name: 'saga',
    members: ['src/saga/', 'src/postgres/'],
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
