/**
 * A stack holding one deployment: the `SagaStreams` construct over a config module. The
 * repository's own app (app.ts) deploys the example saga with it; in your project, put
 * `new SagaStreams(this, 'Orders', { entry: 'src/saga.ts' })` in any stack.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { FunctionRole } from '../../functions/aws/lib/roles';
import { SagaStreams, type SagaStreamsProps } from './construct';

export type SagaStreamsStackProps = StackProps &
  SagaStreamsProps & {
    /** An existing topic for the alarms, by ARN (what `alarmTopic` takes as a construct). */
    readonly alarmTopicArn?: string;
  };

export class SagaStreamsStack extends Stack {
  readonly saga: SagaStreams;
  readonly functions: Partial<Record<FunctionRole, lambda.Function>>;

  constructor(scope: Construct, id: string, props: SagaStreamsStackProps) {
    super(scope, id, props);
    const alarmTopic = props.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : props.alarmTopic;
    this.saga = new SagaStreams(this, 'Saga', { ...props, alarmTopic });
    this.functions = this.saga.functions;
  }
}
