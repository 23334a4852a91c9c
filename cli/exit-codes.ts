/** Exit codes of `saga-streams`, documented in --help: scripts branch on them. */
export const ExitCodes = {
  ok: 0,
  /** The command ran and failed (Redis unreachable, invalid config, missing secret, a record not redriven…). */
  failure: 1,
  /** The command line is wrong (unknown command or option, bad value, unknown consumer, config file not found). */
  usage: 2,
} as const;

export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/** A command-line mistake: printed with a hint to --help, exit code 2. */
export class UsageError extends Error {
  readonly code = 'CLI_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command finished but did not fully succeed; its output is already printed. */
export class CommandFailed extends Error {
  readonly code = 'CLI_COMMAND_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailed';
  }
}
