/**
 * Development secrets: every key and token variable the config names that the
 * environment lacks gets a value for this run — the one an earlier run persisted in
 * `.saga-streams/dev.json` when there is one, so entries signed before a restart still
 * verify, else a fresh random one. Producer tokens are returned so the stack can print
 * them (a curl needs one); keys are never printed, only written to the 0600 dev file.
 * Variables set in the environment always win (and are not written to the file).
 */
import { randomBytes } from 'node:crypto';
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { SecretEnv } from '../src/deployment/secrets';

export interface DevSecrets {
  /** The environment with the development values added. */
  readonly env: SecretEnv;
  /** Names of the variables generated for this run. */
  readonly generated: readonly string[];
  /** Names of the variables taken from the dev file. */
  readonly reused: readonly string[];
  /** Every development value in use (generated and reused): what the dev file keeps. */
  readonly values: Readonly<Record<string, string>>;
  /** producer → token, for development tokens only (not those from the environment). */
  readonly tokens: ReadonlyMap<string, string>;
}

/** Every secret variable the deployment's functions read, except Redis and platform ones. */
export function secretNames(config: DeploymentConfig): string[] {
  const names = new Set(config.secrets.publishApi);
  for (const consumer of config.consumers.keys()) for (const name of config.secrets.consumer(consumer)) names.add(name);
  return [...names];
}

export function devSecrets(config: DeploymentConfig, env: SecretEnv, persisted: Readonly<Record<string, string>> = {}): DevSecrets {
  const tokenOwners = new Map(Object.entries(config.data.publishApi?.producers ?? {}).map(([producer, spec]) => [spec.tokenEnv, producer]));
  const values: Record<string, string> = {};
  const generated: string[] = [];
  const reused: string[] = [];
  const tokens = new Map<string, string>();
  for (const name of secretNames(config)) {
    if (env[name]) continue;
    const owner = tokenOwners.get(name);
    const kept = persisted[name];
    if (kept) {
      values[name] = kept;
      reused.push(name);
    } else {
      values[name] = owner === undefined ? `hex:${randomBytes(32).toString('hex')}` : `dev-${owner}-${randomBytes(18).toString('base64url')}`;
      generated.push(name);
    }
    if (owner !== undefined) tokens.set(owner, values[name]);
  }
  return { env: { ...env, ...values }, generated: generated.sort(), reused: reused.sort(), values, tokens };
}
