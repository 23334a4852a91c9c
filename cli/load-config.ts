/**
 * Loads the deployment config module (`--config`, default ./saga.config.ts). The module is
 * imported natively when the runtime can (JavaScript, or TypeScript under a loader such as
 * tsx in this repository), else through jiti, which compiles TypeScript on the fly. Under
 * jiti, `saga-streams` itself is loaded natively, so the config's classes (Rejection, …) are
 * the very ones the CLI checks against. The module's default export must be a
 * `defineConfig(...)` result; an optional `demo` export feeds the local stack's demo.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createJiti } from 'jiti';
import type { DeploymentConfig } from '../src/deployment/define-config';
import { UsageError } from './exit-codes';

export interface LoadedConfig {
  readonly path: string;
  readonly config: DeploymentConfig;
  /** The module's other exports (e.g. `demo`). */
  readonly module: Readonly<Record<string, unknown>>;
}

function isDeploymentConfig(value: unknown): value is DeploymentConfig {
  const config = value as Partial<DeploymentConfig> | undefined;
  return typeof config === 'object' && config !== null && typeof config.name === 'string' && config.consumers instanceof Map && typeof config.routesFor === 'function';
}

export async function loadConfig(path: string, cwd: string): Promise<LoadedConfig> {
  const absolute = resolve(cwd, path);
  if (!existsSync(absolute)) throw new UsageError(`config file not found: ${absolute} (pass --config <path>)`);
  // A config that fails validation throws ConfigError from here (exit 1, every problem listed).
  const module = await importModule(absolute);
  if (!isDeploymentConfig(module.default)) {
    throw new UsageError(`${absolute} must \`export default defineConfig({...})\``);
  }
  return { path: absolute, config: module.default, module };
}

async function importModule(absolute: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  }
  const jiti = createJiti(absolute, { fsCache: false, nativeModules: ['saga-streams'], interopDefault: false });
  return (await jiti.import(absolute)) as Record<string, unknown>;
}

/** The plan of a configured consumer, or a UsageError naming the ones that exist. */
export function consumerNamed(config: DeploymentConfig, name: string | undefined) {
  const names = [...config.consumers.keys()].join(', ');
  if (name === undefined) throw new UsageError(`name a consumer: one of ${names}`);
  const plan = config.consumers.get(name);
  if (!plan) throw new UsageError(`no consumer ${JSON.stringify(name)} in ${config.name}; configured: ${names}`);
  return plan;
}
