/**
 * A local stand-in for the AWS Parameters and Secrets Lambda Extension (its HTTP API on
 * localhost): serves named Secrets Manager secrets and SSM parameters to requests carrying
 * the expected session token, and records every request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeExtension {
  readonly url: string;
  readonly requests: string[];
  close(): Promise<void>;
}

export interface FakeStore {
  readonly token: string;
  readonly secrets?: Record<string, { SecretString?: string; SecretBinary?: string }>;
  readonly parameters?: Record<string, string>;
}

export async function startFakeExtension(store: FakeStore): Promise<FakeExtension> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    requests.push(`${url.pathname}?${url.searchParams.toString()}`);
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.headers['x-aws-parameters-secrets-token'] !== store.token) return reply(401, { message: 'bad token' });
    if (url.pathname === '/secretsmanager/get') {
      const id = url.searchParams.get('secretId') ?? '';
      const secret = store.secrets?.[id];
      return secret ? reply(200, { Name: id, ...secret }) : reply(400, { message: 'ResourceNotFoundException' });
    }
    if (url.pathname === '/systemsmanager/parameters/get' && url.searchParams.get('withDecryption') === 'true') {
      const name = url.searchParams.get('name') ?? '';
      const value = store.parameters?.[name];
      return value === undefined ? reply(400, { message: 'ParameterNotFound' }) : reply(200, { Parameter: { Name: name, Type: 'SecureString', Value: value } });
    }
    return reply(404, { message: 'unknown path' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
