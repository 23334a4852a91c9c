/**
 * Secret variables → Secrets Manager secrets or SSM parameters, by name. Each function gets
 * the pointer variables (`X_SECRET_ID`, `X_SECRET_STORE`) and read access for exactly the
 * secrets it uses — one IAM statement per secret, on that secret's ARN.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import type { ConfigProblem } from '../../src/ground/errors';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { secretPointerEnv } from '../../functions/aws/lib/secret-env';
import { FUNCTION_ROLES, secretNamesOf } from '../../functions/aws/lib/roles';

/** Where one secret variable's value lives; `kmsKeyArn` only for a customer-managed key. */
export type SecretSource =
  | { readonly secretsManager: string; readonly kmsKeyArn?: string }
  | { readonly ssmParameter: string; readonly kmsKeyArn?: string };

export type SecretSources = Readonly<Record<string, SecretSource>>;

/** Every secret variable some function of the deployment reads. */
export function secretVariables(config: DeploymentConfig): string[] {
  return [...new Set(FUNCTION_ROLES.flatMap((role) => secretNamesOf(config, role)))].sort();
}

/** Secrets Manager secret `<deployment>/<VARIABLE>` for each secret variable, unless overridden. */
export function defaultSecretSources(config: DeploymentConfig, overrides: SecretSources = {}): SecretSources {
  const defaults = Object.fromEntries(secretVariables(config).map((name) => [name, { secretsManager: `${config.name}/${name}` }]));
  return { ...defaults, ...overrides };
}

export function missingSources(config: DeploymentConfig, sources: SecretSources): ConfigProblem[] {
  return secretVariables(config)
    .filter((name) => !Object.hasOwn(sources, name))
    .map((name) => ({ path: `secrets.${name}`, message: 'names no Secrets Manager secret or SSM parameter for this variable' }));
}

interface Readable {
  grantRead(grantee: iam.IGrantable): iam.Grant;
}

export class SecretGrants extends Construct {
  readonly #sources: SecretSources;
  readonly #imported = new Map<string, Readable>();

  constructor(scope: Construct, id: string, sources: SecretSources) {
    super(scope, id);
    this.#sources = sources;
  }

  /** Points `fn` at each named secret and lets it read those, and only those. */
  bind(fn: lambda.Function, names: readonly string[]): void {
    for (const name of names) {
      const source = this.#sources[name]!;
      const pointer = 'ssmParameter' in source ? secretPointerEnv(name, 'ssm', source.ssmParameter) : secretPointerEnv(name, 'secretsmanager', source.secretsManager);
      for (const [key, value] of Object.entries(pointer)) fn.addEnvironment(key, value);
      this.#secret(name, source).grantRead(fn);
    }
  }

  #secret(name: string, source: SecretSource): Readable {
    const existing = this.#imported.get(name);
    if (existing) return existing;
    const encryptionKey = source.kmsKeyArn ? kms.Key.fromKeyArn(this, `${name}Key`, source.kmsKeyArn) : undefined;
    const imported: Readable =
      'ssmParameter' in source
        ? ssm.StringParameter.fromSecureStringParameterAttributes(this, name, { parameterName: source.ssmParameter, encryptionKey })
        : secretsmanager.Secret.fromSecretAttributes(this, name, {
            // A name, not a full ARN: the grant covers the random 6-character suffix Secrets Manager appends.
            secretPartialArn: Stack.of(this).formatArn({
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: source.secretsManager,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
            encryptionKey,
          });
    this.#imported.set(name, imported);
    return imported;
  }
}
