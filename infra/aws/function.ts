/**
 * One Lambda function of the set: Node.js 22, bundled by the local esbuild (never Docker;
 * the AWS SDK stays external because the runtime provides it, and so does ioredis for a
 * REST-only deployment, and node-postgres for one without a database: each is imported only
 * when chosen), with the Parameters and
 * Secrets extension layer the handlers read their secrets through.
 */
import { Duration } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { FunctionRole } from '../../functions/aws/lib/roles';
import { bundleAliases } from './handler-file';

export interface SagaFunctionOptions {
  readonly role: FunctionRole;
  readonly timeoutMs: number;
  readonly memorySizeMb: number;
  readonly logRetention: logs.RetentionDays;
  readonly description: string;
  /** The generated handler module (exports `handler`). */
  readonly entry: string;
  readonly projectRoot: string;
  readonly lockFile: string;
  /** Modules the function never loads (e.g. ioredis for a REST-only deployment): left out of the bundle. */
  readonly externals: readonly string[];
  /** Concurrent executions reserved for (and capping) this function; undefined: the unreserved pool. */
  readonly reservedConcurrency?: number;
  readonly network?: FunctionNetwork;
}

/**
 * A VPC for every function (ElastiCache / MemoryDB are reachable only from inside one). The
 * functions then also need a route to Secrets Manager / SSM (the extension reads secrets
 * there) and SQS: a NAT gateway or interface VPC endpoints.
 */
export interface FunctionNetwork {
  readonly vpc: ec2.IVpc;
  /** Default: the VPC's private subnets. */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** Default: one security group per function, all egress allowed. */
  readonly securityGroups?: ec2.ISecurityGroup[];
}

export function sagaFunction(scope: Construct, id: string, options: SagaFunctionOptions): NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, { retention: options.logRetention });
  return new NodejsFunction(scope, id, {
    description: options.description,
    entry: options.entry,
    handler: 'handler',
    projectRoot: options.projectRoot,
    depsLockFilePath: options.lockFile,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(Math.ceil(options.timeoutMs / 1_000)),
    memorySize: options.memorySizeMb,
    logGroup,
    reservedConcurrentExecutions: options.reservedConcurrency,
    vpc: options.network?.vpc,
    vpcSubnets: options.network?.vpcSubnets,
    securityGroups: options.network?.securityGroups,
    environment: { NODE_OPTIONS: '--enable-source-maps' },
    paramsAndSecrets: lambda.ParamsAndSecretsLayerVersion.fromVersion(lambda.ParamsAndSecretsVersions.V1_0_103, {
      cacheEnabled: true,
      logLevel: lambda.ParamsAndSecretsLogLevel.WARN,
    }),
    bundling: {
      forceDockerBundling: false,
      externalModules: ['@aws-sdk/*', ...options.externals],
      format: OutputFormat.CJS,
      target: 'node22',
      minify: true,
      // Error classes name themselves from their constructor (`new.target.name`): keep names.
      keepNames: true,
      sourceMap: true,
      sourcesContent: false,
      logLevel: LogLevel.WARNING,
      esbuildArgs: Object.fromEntries(Object.entries(bundleAliases()).map(([name, path]) => [`--alias:${name}`, path])),
    },
  });
}
