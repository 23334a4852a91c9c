/**
 * Client of the AWS Parameters and Secrets Lambda Extension: a local HTTP cache in front
 * of Secrets Manager and SSM Parameter Store (the layer the stack attaches). Requests carry
 * the container's session token, as the extension requires. Errors name the variable and
 * the secret's name, never a value or a response body.
 */
import type { SecretEnv } from '../../../src/deployment/secrets';
import type { SecretFetcher, SecretRef } from './secret-env';

export const EXTENSION_DEFAULT_PORT = 2773;
export const EXTENSION_TOKEN_HEADER = 'X-Aws-Parameters-Secrets-Token';

export class SecretFetchError extends Error {
  readonly code = 'SECRET_UNAVAILABLE';

  constructor(ref: SecretRef, reason: string) {
    super(`cannot read ${ref.variable} from ${ref.store} "${ref.id}": ${reason}`);
    this.name = 'SecretFetchError';
  }
}

export interface ExtensionOptions {
  /** Source of AWS_SESSION_TOKEN and PARAMETERS_SECRETS_EXTENSION_HTTP_PORT. */
  readonly env: SecretEnv;
  /** Base URL; defaults to the extension's port on localhost. */
  readonly endpoint?: string;
  readonly fetch?: typeof fetch;
}

function requestPath(ref: SecretRef): string {
  return ref.store === 'ssm'
    ? `/systemsmanager/parameters/get?name=${encodeURIComponent(ref.id)}&withDecryption=true`
    : `/secretsmanager/get?secretId=${encodeURIComponent(ref.id)}`;
}

/** A binary secret becomes `base64:…`, which key parsing (parseSecretKey) understands. */
function valueOf(ref: SecretRef, body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  if (ref.store === 'ssm') return (body as { Parameter?: { Value?: unknown } }).Parameter?.Value as string | undefined;
  const { SecretString, SecretBinary } = body as { SecretString?: unknown; SecretBinary?: unknown };
  if (typeof SecretString === 'string') return SecretString;
  return typeof SecretBinary === 'string' ? `base64:${SecretBinary}` : undefined;
}

export function extensionSecretFetcher(options: ExtensionOptions): SecretFetcher {
  const fetchFn = options.fetch ?? fetch;
  return async (ref) => {
    const token = options.env.AWS_SESSION_TOKEN;
    if (!token) throw new SecretFetchError(ref, 'AWS_SESSION_TOKEN is not set (not running on Lambda?)');
    const port = options.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? String(EXTENSION_DEFAULT_PORT);
    const base = options.endpoint ?? `http://localhost:${port}`;
    let response: Response;
    try {
      response = await fetchFn(`${base}${requestPath(ref)}`, { headers: { [EXTENSION_TOKEN_HEADER]: token } });
    } catch (error) {
      throw new SecretFetchError(ref, `extension unreachable (${error instanceof Error ? error.message : 'fetch failed'})`);
    }
    if (!response.ok) throw new SecretFetchError(ref, `extension answered HTTP ${response.status}`);
    const value = valueOf(ref, await response.json().catch(() => undefined));
    if (typeof value !== 'string' || value === '') throw new SecretFetchError(ref, 'the reply holds no string value');
    return value;
  };
}
