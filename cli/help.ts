/** `saga-streams --help`: the commands, options and exit codes (README's CLI reference mirrors it). */

export const HELP = `saga-streams — poll, trim, inspect and redrive saga streams; run the local stack.

Usage: saga-streams <command> [options]

Commands:
  dev                              run the local stack: Redis (REDIS_URL or a private
                                   redis-server), the publish API and status page, every
                                   consumer and trim on emulated schedules, the example saga
      --port <n>                   HTTP port (default 8787; 0 = any free port)
      --host <addr>                listen address (default 127.0.0.1)
      --no-demo                    do not place the demo orders on startup
  poll <consumer>                  one poll run of a configured consumer
      --mode drain|continuous      default: the consumer's configured mode
      --budget <duration>          run deadline from now (default: the consumer's runBudgetMs)
      --consumer-name <name>       Redis consumer name for this run (default: configured)
  trim                             safe trim, dead-letter retention and consumer reaper
  backlog [consumer...]            pending count, oldest pending age, lag, dead letters
  dlt list                         dead-letter records, oldest first
      --stream <s>                 only this source stream (default: every consumed stream)
      --reason <r>                 only this reason (repeatable)
      --older-than <duration>      only records dead-lettered at least this long ago
      --newer-than <duration>      only records dead-lettered at most this long ago
      --limit <n>                  at most n records per stream (default 100, max 10000)
  dlt redrive <id...> | --all      move records back to their source stream, byte for byte
      --stream <s>                 where the ids live (needed only if two DLTs hold an id)
      --all                        every record (filtered by --reason/--older-than/--newer-than)
  publish <event-type>             append one event, signed as its producer
      --id <event_id>              required: the event id (deduplication identity)
      --payload <text>             payload text (e.g. JSON), or
      --payload-file <file>        payload bytes from a file ("-" = stdin)
      --as <producer>              producer to sign as, when more than one can
      --traceparent <tp>           W3C traceparent to attach
      --flow-key <key>             the entry's flow key (e.g. the saga instance id)
      --delay <duration>           deliver this long from now (scheduled; at most 365d)
      --deliver-at <time>          deliver at this RFC 3339 time, e.g. 2026-12-24T18:00:00Z
  schedule list                    scheduled events, earliest due first
      --stream <s>                 only this stream (default: every stream of the config)
      --limit <n>                  at most n events per stream (default 100, max 10000)
      --offset <n>                 skip the first n of each stream (paging)
  schedule cancel <event_id...>    cancel scheduled events (never delivered then)
      --stream <s>                 where they are scheduled (needed only if two streams hold an id)
  schedule move                    move due scheduled events into their streams now
      --stream <s>                 only this stream
      --max <n>                    at most n events per stream (default 100, max 10000)
  db migrate                       create/upgrade the inbox, outbox and the config module's
                                   \`migrations\` (idempotent; DATABASE_URL, or the local
                                   stack's PGlite in .saga-streams/pglite when unset)
      --print                      print saga-streams' SQL instead of applying it

  init [dir]                       scaffold a project using saga-streams (config, handler, test,
                                   deploy files)
      --platform aws|cloudflare    deploy files to write (default aws)
      --name <name>                deployment name (default: the directory's name)
      --dependency <spec>          the saga-streams dependency to write: a version, range or
                                   dist-tag, a tarball or built package folder, a git or https
                                   URL (default: where this saga-streams came from — the
                                   tarball it was installed from, or this checkout packed into
                                   vendor/ — until it is on the npm registry)
  wrangler                         print the wrangler.toml of the config (Cloudflare Worker)
      --main <path>                the Worker module (default src/worker.ts)
      --queue <name>               wake-up queue name (default <deployment>-wake-ups)
  rest-emulator                    serve the Upstash REST protocol in front of REDIS_URL (or
                                   the running local stack's Redis), for \`wrangler dev\`
      --port <n>                   HTTP port (default 8079; 0 = any free port)
      --dev-vars <file>            write the Worker's .dev.vars there (mode 0600): the REST
                                   URL and token, and the config's secrets from the environment

Global options:
  --config <path>                  deployment config module (default ./saga.config.ts)
  --json                           machine-readable output: one JSON document per line on stdout
  -h, --help                       this help
  -v, --version                    the installed saga-streams version

Durations: 500ms, 30s, 10m, 2h, 7d.
Environment: REDIS_URL (or the variable named by the config's redis.tcp.urlEnv) and the
secret variables the config names (only those the command needs are read). Unset, commands
that use Redis take them from .saga-streams/dev.json while \`saga-streams dev\` runs here.

Exit codes:
  0  success
  1  failure (Redis unreachable, invalid config, missing secret, a record not redriven, …)
  2  usage error (unknown command or option, bad value, unknown consumer, config not found)
`;
