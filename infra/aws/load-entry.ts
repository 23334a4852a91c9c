/**
 * Synthesis reads the deployment config from the very module the functions bundle, so
 * infrastructure and code cannot come from two configs. The module is TypeScript in
 * general: it loads through jiti (synchronously, as construct constructors are).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { createJiti } from 'jiti';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { ConfigError } from '../../src/ground/errors';

function isDeploymentConfig(value: unknown): value is DeploymentConfig {
  const config = value as Partial<DeploymentConfig> | undefined;
  return typeof config === 'object' && config !== null && typeof config.name === 'string' && config.consumers instanceof Map && typeof config.routesFor === 'function';
}

export function absoluteEntry(entry: string): string {
  const path = isAbsolute(entry) ? entry : resolve(process.cwd(), entry);
  if (!existsSync(path)) throw new ConfigError('SagaStreams construct', [{ path: 'entry', message: `${path} does not exist` }]);
  return path;
}

/** The config `exportName` (default: the default export) of the module at `entry`. */
export function loadEntryConfig(entry: string, exportName = 'default'): DeploymentConfig {
  const jiti = createJiti(import.meta.url, { fsCache: false, moduleCache: true });
  const module = jiti(entry) as Record<string, unknown>;
  const value = module[exportName] ?? (exportName === 'default' ? module : undefined);
  if (!isDeploymentConfig(value)) {
    throw new ConfigError('SagaStreams construct', [{ path: 'entry', message: `${entry} must export ${exportName === 'default' ? 'default' : exportName} a defineConfig(...) result` }]);
  }
  return value;
}
