/**
 * Secrets on Lambda: the deployment config names environment variables; for each secret
 * variable X the stack sets `X_SECRET_ID` (a Secrets Manager secret name or an SSM
 * parameter name) and `X_SECRET_STORE` (`secretsmanager`, the default, or `ssm`). A
 * container resolves them once into an environment the runtime reads as usual. A variable
 * without `X_SECRET_ID` is taken from the plain environment (local runs, tests).
 */
import { ConfigError, type ConfigProblem } from '../../../src/ground/errors';
import type { SecretEnv } from '../../../src/deployment/secrets';

export const SECRET_ID_SUFFIX = '_SECRET_ID';
export const SECRET_STORE_SUFFIX = '_SECRET_STORE';
export const SECRET_STORES = ['secretsmanager', 'ssm'] as const;
export type SecretStore = (typeof SECRET_STORES)[number];

/** One secret variable and where its value lives. */
export interface SecretRef {
  readonly variable: string;
  readonly store: SecretStore;
  readonly id: string;
}

/** Reads one secret's value from its store. */
export type SecretFetcher = (ref: SecretRef) => Promise<string>;

/** The environment entries that point variable `variable` at secret `id` in `store`. */
export function secretPointerEnv(variable: string, store: SecretStore, id: string): Record<string, string> {
  return { [`${variable}${SECRET_ID_SUFFIX}`]: id, [`${variable}${SECRET_STORE_SUFFIX}`]: store };
}

function refOf(env: SecretEnv, variable: string, problems: ConfigProblem[]): SecretRef | undefined {
  const id = env[`${variable}${SECRET_ID_SUFFIX}`];
  if (!id) return undefined;
  const store = env[`${variable}${SECRET_STORE_SUFFIX}`] ?? 'secretsmanager';
  if (!(SECRET_STORES as readonly string[]).includes(store)) {
    problems.push({ path: `${variable}${SECRET_STORE_SUFFIX}`, message: `must be one of ${SECRET_STORES.join(', ')}` });
    return undefined;
  }
  return { variable, store: store as SecretStore, id };
}

/** `env` plus the value of every named variable that points at a secret store. */
export async function resolveSecretEnv(env: SecretEnv, names: readonly string[], fetchSecret: SecretFetcher): Promise<SecretEnv> {
  const problems: ConfigProblem[] = [];
  const refs = names.flatMap((name) => refOf(env, name, problems) ?? []);
  if (problems.length > 0) throw new ConfigError('secret pointers', problems);
  const values = await Promise.all(refs.map(async (ref) => [ref.variable, await fetchSecret(ref)] as const));
  return Object.freeze({ ...env, ...Object.fromEntries(values) });
}
