/**
 * The CDK app of this repository: one stack for the example deployment in saga.config.ts,
 * built from the sources (the generated handlers import functions/aws/index.ts instead of
 * the published `saga-streams/aws`). Secrets default to Secrets Manager secrets named
 * `<deployment>/<VARIABLE>`; override per variable in cdk.json context
 * `sagaStreams:secrets`, e.g. `{"REDIS_URL": {"ssmParameter": "/order-saga/redis-url"}}`,
 * and set `sagaStreams:alarmTopicArn` to use an existing topic (else the stack creates one).
 */
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import type { SecretSources } from './secrets';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { SagaStreamsStack } from './stack';

const entry = fileURLToPath(new URL('../../saga.config.ts', import.meta.url));
// Imported under tsx (cdk.json's app command), which resolves the example package's
// `saga-streams` imports to the sources through tsconfig.json's paths; the construct's own
// loader (jiti) would look for a built dist/ instead.
const config = ((await import(entry)) as { default: DeploymentConfig }).default;
const runtimeModule = fileURLToPath(new URL('../../functions/aws/index.ts', import.meta.url));
const app = new App();
const secrets = (app.node.tryGetContext('sagaStreams:secrets') ?? {}) as SecretSources;
const topicArn = (app.node.tryGetContext('sagaStreams:alarmTopicArn') as string | null | undefined) ?? undefined;

new SagaStreamsStack(app, `${config.name}-saga-streams`, {
  entry,
  config,
  runtimeModule,
  secrets,
  // Without a topic ARN the construct creates a topic (output AlarmTopicArn) to subscribe to.
  alarmTopicArn: topicArn,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
