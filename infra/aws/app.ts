/**
 * The CDK app: one stack for the deployment in saga.config.ts. Secrets default to Secrets
 * Manager secrets named `<deployment>/<VARIABLE>`; override per variable in cdk.json
 * context `sagaStreams:secrets`, e.g. `{"REDIS_URL": {"ssmParameter": "/order-saga/redis-url"}}`,
 * and set `sagaStreams:alarmTopicArn` to be notified.
 */
import { App } from 'aws-cdk-lib';
import config from '../../saga.config';
import { defaultSecretSources, type SecretSources } from './secrets';
import { SagaStreamsStack } from './stack';

const app = new App();
const overrides = (app.node.tryGetContext('sagaStreams:secrets') ?? {}) as SecretSources;
const topicArn = (app.node.tryGetContext('sagaStreams:alarmTopicArn') as string | null | undefined) ?? undefined;

new SagaStreamsStack(app, `${config.name}-saga-streams`, {
  config,
  secrets: defaultSecretSources(config, overrides),
  alarms: { topicArn },
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
