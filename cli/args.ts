/**
 * Command-line parsing: global options anywhere, one command (two words for `dlt`, `schedule`, `db`), its
 * positionals and its own options. Anything unknown, or an option the command does not
 * take, is a UsageError (exit 2) — never silently ignored.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes';

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean; short?: string };

const GLOBAL_OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} satisfies Record<string, OptionSpec>;

const COMMAND_OPTIONS = {
  dev: { port: { type: 'string' }, host: { type: 'string' }, 'no-demo': { type: 'boolean' } },
  poll: { mode: { type: 'string' }, budget: { type: 'string' }, 'consumer-name': { type: 'string' } },
  trim: {},
  backlog: {},
  'dlt list': {
    stream: { type: 'string' },
    reason: { type: 'string', multiple: true },
    'older-than': { type: 'string' },
    'newer-than': { type: 'string' },
    limit: { type: 'string' },
  },
  'dlt redrive': {
    stream: { type: 'string' },
    all: { type: 'boolean' },
    reason: { type: 'string', multiple: true },
    'older-than': { type: 'string' },
    'newer-than': { type: 'string' },
  },
  publish: {
    id: { type: 'string' },
    payload: { type: 'string' },
    'payload-file': { type: 'string' },
    as: { type: 'string' },
    traceparent: { type: 'string' },
    'flow-key': { type: 'string' },
    'deliver-at': { type: 'string' },
    delay: { type: 'string' },
  },
  'schedule list': { stream: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } },
  'schedule cancel': { stream: { type: 'string' } },
  'schedule move': { stream: { type: 'string' }, max: { type: 'string' } },
  'db migrate': { print: { type: 'boolean' } },
  init: { platform: { type: 'string' }, name: { type: 'string' }, dependency: { type: 'string' } },
  wrangler: { main: { type: 'string' }, queue: { type: 'string' } },
  'rest-emulator': { port: { type: 'string' }, 'dev-vars': { type: 'string' } },
  help: {},
} satisfies Record<string, Record<string, OptionSpec>>;

export type CommandName = keyof typeof COMMAND_OPTIONS;
export const COMMANDS = Object.keys(COMMAND_OPTIONS) as CommandName[];

export interface ParsedArgs {
  readonly command: CommandName;
  readonly positionals: readonly string[];
  readonly config: string;
  readonly json: boolean;
  readonly help: boolean;
  readonly version: boolean;
  string(name: string): string | undefined;
  strings(name: string): readonly string[];
  flag(name: string): boolean;
}

const ALL_OPTIONS: Record<string, OptionSpec> = Object.assign({}, GLOBAL_OPTIONS, ...Object.values(COMMAND_OPTIONS));

export const DEFAULT_CONFIG_PATH = './saga.config.ts';

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: ALL_OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const words = [...parsed.positionals];
  let command: CommandName;
  const first = words.shift();
  if (first === undefined) command = 'help';
  else if (first === 'dlt') {
    const sub = words.shift();
    if (sub !== 'list' && sub !== 'redrive') throw new UsageError(`dlt needs a subcommand: "dlt list" or "dlt redrive"${sub ? ` (got ${JSON.stringify(sub)})` : ''}`);
    command = `dlt ${sub}`;
  } else if (first === 'schedule') {
    const sub = words.shift();
    if (sub !== 'list' && sub !== 'cancel' && sub !== 'move') {
      throw new UsageError(`schedule needs a subcommand: "schedule list", "schedule cancel" or "schedule move"${sub ? ` (got ${JSON.stringify(sub)})` : ''}`);
    }
    command = `schedule ${sub}`;
  } else if (first === 'db') {
    const sub = words.shift();
    if (sub !== 'migrate') throw new UsageError(`db needs a subcommand: "db migrate"${sub ? ` (got ${JSON.stringify(sub)})` : ''}`);
    command = 'db migrate';
  } else if (first in COMMAND_OPTIONS && !first.includes(' ')) command = first as CommandName;
  else throw new UsageError(`unknown command ${JSON.stringify(first)}`);

  const allowed = new Set([...Object.keys(GLOBAL_OPTIONS), ...Object.keys(COMMAND_OPTIONS[command])]);
  const foreign = Object.keys(values).filter((name) => values[name] !== undefined && !allowed.has(name));
  if (foreign.length > 0) throw new UsageError(`${command} does not take ${foreign.map((n) => `--${n}`).join(', ')}`);

  return {
    command,
    positionals: words,
    config: (values.config as string | undefined) ?? DEFAULT_CONFIG_PATH,
    json: values.json === true,
    help: values.help === true,
    version: values.version === true,
    string: (name) => values[name] as string | undefined,
    strings: (name) => (values[name] as string[] | undefined) ?? [],
    flag: (name) => values[name] === true,
  };
}
