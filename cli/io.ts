/**
 * What a CLI command may touch: its output streams, the environment, the working
 * directory and a stop signal. Injected, so tests run commands in-process and read what
 * they printed; `nodeIo()` binds the real process.
 */

export interface CliIo {
  /** One line to stdout (results; JSON lines with --json). */
  out(line: string): void;
  /** One line to stderr (messages for humans). */
  err(line: string): void;
  /** Rewrites the progress line on stderr (a TTY) or prints it, rate-limited (otherwise). */
  progress(line: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborted on SIGINT/SIGTERM (long-running commands stop cleanly). */
  readonly signal: AbortSignal;
}

/** Progress updates closer together than this are dropped on a non-TTY stderr. */
const PROGRESS_INTERVAL_MS = 1_000;

export function nodeIo(signal: AbortSignal): CliIo {
  const tty = process.stderr.isTTY === true;
  let lastProgress = 0;
  let progressShown = false;
  const clearProgress = () => {
    if (tty && progressShown) process.stderr.write('\r\x1b[K');
    progressShown = false;
  };
  return {
    out: (line) => {
      clearProgress();
      process.stdout.write(`${line}\n`);
    },
    err: (line) => {
      clearProgress();
      process.stderr.write(`${line}\n`);
    },
    progress: (line) => {
      if (tty) {
        process.stderr.write(`\r\x1b[K${line}`);
        progressShown = true;
        return;
      }
      const now = Date.now();
      if (now - lastProgress < PROGRESS_INTERVAL_MS) return;
      lastProgress = now;
      process.stderr.write(`${line}\n`);
    },
    env: process.env,
    cwd: process.cwd(),
    signal,
  };
}
