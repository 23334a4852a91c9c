/**
 * Development secrets: every key and token variable the config names that the
 * environment lacks gets a fresh random value for this run. Generated producer tokens
 * are returned so the stack can print them (a curl needs one); keys are never printed.
 * Set the variables yourself to keep them across restarts (e.g. against your own Redis,
 * where entries signed in an earlier run must still verify).
 */
import { randomBytes } from 'node:crypto';
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { SecretEnv } from '../src/deployment/secrets';

export interface DevSecrets {
  /** The environment with the generated values added. */
  readonly env: SecretEnv;
  /** Names of the variables generated for this run. */
  readonly generated: readonly string[];
  /** producer → token, for generated tokens only. */
  readonly tokens: ReadonlyMap<string, string>;
}

/** Every secret variable the deployment's functions read, except Redis and platform ones. */
function secretNames(config: DeploymentConfig): string[] {
  const names = new Set(config.secrets.publishApi);
  for (const consumer of config.consumers.keys()) for (const name of config.secrets.consumer(consumer)) names.add(name);
  return [...names];
}

export function devSecrets(config: DeploymentConfig, env: SecretEnv): DevSecrets {
  const tokenOwners = new Map(Object.entries(config.data.publishApi?.producers ?? {}).map(([producer, spec]) => [spec.tokenEnv, producer]));
  const added: Record<string, string> = {};
  const tokens = new Map<string, string>();
  for (const name of secretNames(config)) {
    if (env[name]) continue;
    const owner = tokenOwners.get(name);
    if (owner !== undefined) {
      added[name] = `dev-${owner}-${randomBytes(18).toString('base64url')}`;
      tokens.set(owner, added[name]);
    } else {
      added[name] = `hex:${randomBytes(32).toString('hex')}`;
    }
  }
  return { env: { ...env, ...added }, generated: Object.keys(added).sort(), tokens };
}
