/**
 * The CLI next to a running local stack: when the Redis URL variable is unset, commands
 * that talk to Redis take the stack's Redis URL and development secrets from the dev file
 * (`.saga-streams/dev.json` in the working folder) — only while the pid that wrote it is
 * alive — and say so on stderr, so `poll` or `publish` against `npm start` needs no
 * exports. Variables set in the environment win over the file's.
 */
import { devFilePath, readDevFile, runningStack } from '../local/dev-file';
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { CliIo } from './io';

export function withRunningStack(io: CliIo, config: DeploymentConfig): CliIo {
  const urlEnv = config.data.redis.tcp?.urlEnv;
  if (urlEnv === undefined || io.env[urlEnv]) return io;
  const running = runningStack(io.cwd);
  if (!running) {
    // The command fails for want of the variable next: say why the dev file did not help.
    if (readDevFile(io.cwd)) io.err(`saga-streams: ${urlEnv} is not set and the local stack of ${devFilePath(io.cwd)} is not running (start it with npm start / saga-streams dev)`);
    return io;
  }
  // Unset and empty variables must not hide the file's values.
  const given = Object.fromEntries(Object.entries(io.env).filter(([, value]) => value));
  io.err(`saga-streams: ${urlEnv} is not set; using the local stack (pid ${running.stack.pid}) from ${running.path}`);
  return { ...io, env: { ...running.file.env, ...given } };
}
