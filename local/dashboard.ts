/**
 * The local stack always serves the ops dashboard (it replaces the old status page), whether
 * or not the config enables it for deployments: its admin token variable is the config's, or
 * SAGA_STREAMS_ADMIN_TOKEN, and a token is generated for this run when the environment has
 * none. The stack prints where the dashboard is and the token, as it does a producer's dev
 * token, and keeps it in the dev file so the next start (and a logged-in browser) reuses it.
 */
import { randomBytes } from 'node:crypto';
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { SecretEnv } from '../src/deployment/secrets';

export const LOCAL_ADMIN_TOKEN_ENV = 'SAGA_STREAMS_ADMIN_TOKEN';

export interface LocalDashboard {
  readonly tokenEnv: string;
  /** The environment, with the token added when generated. */
  readonly env: SecretEnv;
  /** The development token in use (generated now or kept from the dev file), if any. */
  readonly generated?: string;
  /** True when that token came from the dev file rather than being generated now. */
  readonly kept?: boolean;
}

export function localDashboard(config: DeploymentConfig, env: SecretEnv, persisted: Readonly<Record<string, string>> = {}): LocalDashboard {
  const tokenEnv = config.data.publishApi?.dashboard?.adminTokenEnv ?? LOCAL_ADMIN_TOKEN_ENV;
  if (env[tokenEnv]) return { tokenEnv, env };
  const kept = persisted[tokenEnv];
  const generated = kept || `dev-admin-${randomBytes(18).toString('base64url')}`;
  return { tokenEnv, env: { ...env, [tokenEnv]: generated }, generated, kept: Boolean(kept) };
}
