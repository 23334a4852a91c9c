/**
 * A stack holding one deployment: the `SagaStreams` construct over a config module. The
 * repository's own app (app.ts) deploys the example saga with it; in your project, put
 * `new SagaStreams(this, 'Orders', { entry: 'src/saga.ts' })` in any stack.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { FunctionRole } from '../../functions/aws/lib/roles';
import { SagaStreams, type SagaStreamsProps } from './construct';

export type SagaStreamsStackProps = StackProps & SagaStreamsProps;

export class SagaStreamsStack extends Stack {
  readonly saga: SagaStreams;
  readonly functions: Partial<Record<FunctionRole, lambda.Function>>;

  constructor(scope: Construct, id: string, props: SagaStreamsStackProps) {
    super(scope, id, props);
    this.saga = new SagaStreams(this, 'Saga', props);
    this.functions = this.saga.functions;
  }
}
