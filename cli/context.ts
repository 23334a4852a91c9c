/**
 * What every command receives: parsed arguments, IO, the loaded config, and a runtime
 * connected on first use (so `--help` and usage errors never touch Redis). `emit` prints
 * one result as a JSON line (--json) or as human lines.
 */
import type { DeploymentRuntime } from '../src/deployment/runtime';
import { createRuntime } from '../src/deployment/runtime';
import { connectTcp } from '../src/deployment/connect-tcp';
import { nodeHmac } from '../src/node/crypto';
import type { RedisPort } from '../src/redis/port';
import type { ParsedArgs } from './args';
import type { CliIo } from './io';
import type { LoadedConfig } from './load-config';

export interface CommandContext {
  readonly args: ParsedArgs;
  readonly io: CliIo;
  readonly loaded: LoadedConfig;
  /** The deployment bound to Redis (REDIS_URL) and the process environment. */
  runtime(): DeploymentRuntime;
  emit(value: unknown, human: () => readonly string[]): void;
  /** Closes what `runtime()` opened. */
  close(): Promise<void>;
}

export function createContext(args: ParsedArgs, io: CliIo, loaded: LoadedConfig): CommandContext {
  let port: RedisPort | undefined;
  let runtime: DeploymentRuntime | undefined;
  return {
    args,
    io,
    loaded,
    runtime() {
      if (!runtime) {
        port = connectTcp(loaded.config, io.env);
        runtime = createRuntime(loaded.config, { port, env: io.env, hmac: nodeHmac });
      }
      return runtime;
    },
    emit(value, human) {
      if (args.json) io.out(JSON.stringify(value));
      else for (const line of human()) io.out(line);
    },
    async close() {
      await port?.close();
    },
  };
}
