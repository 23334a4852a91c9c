/**
 * Secret values come from the environment (or a secret store the entry point copied into
 * one), by the variable names the deployment config declares. Missing ones fail naming
 * the variables, never a value. Key text may be `hex:…`, `base64:…`, or plain UTF-8.
 */
import { SecretKey } from '../auth/secret';
import { ConfigError } from '../ground/errors';

export type SecretEnv = Readonly<Record<string, string | undefined>>;

/** Every named variable, or a ConfigError listing each one that is missing or empty. */
export function readSecrets(env: SecretEnv, names: readonly string[], subject: string): Map<string, string> {
  const values = new Map<string, string>();
  const missing = names.filter((name) => {
    const value = env[name];
    if (value === undefined || value === '') return true;
    values.set(name, value);
    return false;
  });
  if (missing.length > 0) {
    throw new ConfigError(
      subject,
      missing.map((name) => ({ path: name, message: 'environment variable is not set (or empty)' })),
    );
  }
  return values;
}

export function parseSecretKey(text: string): SecretKey {
  if (text.startsWith('hex:')) return SecretKey.fromHex(text.slice(4));
  if (text.startsWith('base64:')) return SecretKey.fromBase64(text.slice(7));
  return SecretKey.from(text);
}
