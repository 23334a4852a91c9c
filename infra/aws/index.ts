/**
 * `saga-streams/cdk`: the deployment as a CDK construct (peer dependencies: aws-cdk-lib,
 * constructs).
 *
 * @example
 * new SagaStreams(this, 'Orders', { entry: 'src/saga.ts' });
 */
export { SagaStreams } from './construct';
export type { SagaStreamsProps } from './construct';
export { SagaStreamsStack } from './stack';
export type { SagaStreamsStackProps } from './stack';
export { defaultSecretSources } from './secrets';
export type { SecretSources, SecretSource } from './secrets';
export type { AlarmOptions } from './alarms';
export type { ReservedConcurrency } from './concurrency';
export type { FunctionNetwork } from './function';
export { loadEntryConfig } from './load-entry';
