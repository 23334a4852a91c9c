/**
 * `saga-streams` as a function: argv in, exit code out, output through the injected IO.
 * `main.ts` binds it to the process; tests call it in-process.
 */
import { errorCode } from '../src/ground/errors';
import { parseCommandLine, type CommandName, type ParsedArgs } from './args';
import { backlogCommand } from './commands/backlog';
import { dltListCommand, dltRedriveCommand } from './commands/dlt';
import { pollCommand } from './commands/poll';
import { publishCommand } from './commands/publish';
import { scheduleCancelCommand, scheduleListCommand, scheduleMoveCommand } from './commands/schedule';
import { initCommand } from './commands/init';
import { trimCommand } from './commands/trim';
import { wranglerCommand } from './commands/wrangler';
import { createContext, type CommandContext } from './context';
import { withRunningStack } from './dev-stack-env';
import { ExitCodes, type ExitCode } from './exit-codes';
import { HELP } from './help';
import type { CliIo } from './io';
import { loadConfig } from './load-config';
import { packageVersion } from './version';

type Command = (ctx: CommandContext) => Promise<void>;

const COMMANDS: Record<Exclude<CommandName, 'help' | 'init'>, Command> = {
  // Loaded on demand: the local stack pulls in the HTTP server, which other commands never need.
  dev: async (ctx) => (await import('./commands/dev')).devCommand(ctx),
  poll: pollCommand,
  trim: trimCommand,
  backlog: backlogCommand,
  'dlt list': dltListCommand,
  'dlt redrive': dltRedriveCommand,
  publish: publishCommand,
  'schedule list': scheduleListCommand,
  'schedule cancel': scheduleCancelCommand,
  'schedule move': scheduleMoveCommand,
  // Loaded on demand: only this command needs a database driver.
  'db migrate': async (ctx) => (await import('./commands/db')).dbMigrateCommand(ctx),
  wrangler: wranglerCommand,
  // Loaded on demand: only this command serves HTTP in front of Redis.
  'rest-emulator': async (ctx) => (await import('./commands/rest-emulator')).restEmulatorCommand(ctx),
};

/** Commands that connect to Redis: run beside `npm start`, they find its Redis and secrets. */
const REDIS_COMMANDS = new Set<CommandName>(['poll', 'trim', 'backlog', 'dlt list', 'dlt redrive', 'publish', 'schedule list', 'schedule cancel', 'schedule move', 'rest-emulator']);

/** Usage errors, and publish input the publisher refused before sending, are the caller's mistake. */
const USAGE_CODES = new Set(['CLI_USAGE', 'PUBLISH_EVENT_INVALID', 'PUBLISH_ROUTE_UNKNOWN', 'PUBLISH_SCHEDULE_INVALID']);

function report(io: CliIo, json: boolean, error: unknown): ExitCode {
  const code = errorCode(error) ?? 'UNEXPECTED';
  const message = error instanceof Error ? error.message : String(error);
  const usage = USAGE_CODES.has(code);
  io.err(`saga-streams: ${message}`);
  if (usage) io.err('run saga-streams --help for usage');
  // A failed command already printed its result; other errors get one JSON line for scripts.
  if (json && code !== 'CLI_COMMAND_FAILED') io.out(JSON.stringify({ error: { code, message } }));
  return usage ? ExitCodes.usage : ExitCodes.failure;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let args: ParsedArgs;
  try {
    args = parseCommandLine(argv);
  } catch (error) {
    return report(io, argv.includes('--json'), error);
  }
  if (args.version) {
    io.out(packageVersion());
    return ExitCodes.ok;
  }
  if (args.help || args.command === 'help') {
    io.out(HELP.trimEnd());
    return ExitCodes.ok;
  }
  if (args.command === 'init') {
    try {
      initCommand(args, io);
      return ExitCodes.ok;
    } catch (error) {
      return report(io, args.json, error);
    }
  }
  let ctx: CommandContext | undefined;
  try {
    const loaded = await loadConfig(args.config, io.cwd);
    ctx = createContext(args, REDIS_COMMANDS.has(args.command) ? withRunningStack(io, loaded.config) : io, loaded);
    await COMMANDS[args.command](ctx);
    return ExitCodes.ok;
  } catch (error) {
    return report(io, args.json, error);
  } finally {
    await ctx?.close().catch(() => {});
  }
}
