/**
 * The AWS side of a deployment, built from its `defineConfig` config: the scheduled poll
 * function (one EventBridge rule per scheduled consumer), the wake-up poll function on its
 * SQS queue (with that queue's own DLQ), the trim function on `trim.schedule`, the publish
 * function behind a Function URL, least-privilege secret access and alarms. A config that
 * cannot be deployed safely (minIdleMs not above a function timeout, unmapped secrets, SQS
 * wake-ups without a consumer) fails synthesis listing every problem.
 */
import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ConfigError, type ConfigProblem } from '../../src/errors';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { consumersOf, secretNamesOf, type FunctionRole } from '../../functions/aws/lib/roles';
import { SagaAlarms, type AlarmOptions } from './alarms';
import { sagaFunction } from './function';
import { pollSchedules, trimSchedule } from './schedules';
import { missingSources, SecretGrants, type SecretSources } from './secrets';
import { deriveTimeouts } from './timeouts';
import { subscribeWakeUps, wakeUpQueues } from './wake-up-queue';

export interface SagaStreamsStackProps extends StackProps {
  readonly config: DeploymentConfig;
  /** Secret variable → Secrets Manager secret or SSM parameter name (see defaultSecretSources). */
  readonly secrets: SecretSources;
  readonly alarms?: AlarmOptions;
  readonly memorySizeMb?: number;
  readonly logRetention?: logs.RetentionDays;
}

function wakeUpProblems(config: DeploymentConfig): ConfigProblem[] {
  if (!config.wakeUpTarget('sqs') || consumersOf(config, 'wake-up').length > 0) return [];
  return [{ path: 'wakeUp', message: 'sends SQS wake-ups, but no consumer has wakeUp: true to receive them' }];
}

export class SagaStreamsStack extends Stack {
  readonly functions: Partial<Record<FunctionRole, lambda.Function>> = {};

  constructor(scope: Construct, id: string, props: SagaStreamsStackProps) {
    super(scope, id, props);
    const { config } = props;
    const { timeouts, problems } = deriveTimeouts(config);
    problems.push(...missingSources(config, props.secrets), ...wakeUpProblems(config));
    if (problems.length > 0) throw new ConfigError(`AWS stack for deployment "${config.name}"`, problems);

    const grants = new SecretGrants(this, 'Secrets', props.secrets);
    const make = (role: FunctionRole, id: string, description: string) => {
      const fn = sagaFunction(this, id, {
        role,
        timeoutMs: timeouts[role],
        memorySizeMb: props.memorySizeMb ?? 512,
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        description: `${config.name}: ${description}`,
      });
      grants.bind(fn, secretNamesOf(config, role));
      this.functions[role] = fn;
      return fn;
    };

    const wakeUpQueue = consumersOf(config, 'wake-up').length > 0 ? wakeUpQueues(this, timeouts['wake-up']) : undefined;
    const sqsTarget = config.wakeUpTarget('sqs');
    /** A function whose publishers (API or handlers) send wake-ups gets the queue URL and SendMessage on it only. */
    const sendsWakeUps = (fn: lambda.Function) => {
      if (!sqsTarget || !wakeUpQueue) return;
      fn.addEnvironment(sqsTarget.queueUrlEnv, wakeUpQueue.queue.queueUrl);
      wakeUpQueue.queue.grantSendMessages(fn);
    };

    const scheduled = consumersOf(config, 'poll');
    if (scheduled.length > 0) {
      const poll = make('poll', 'Poll', 'poll consumers on their schedules');
      pollSchedules(this, config.name, poll, scheduled);
      sendsWakeUps(poll);
    }

    if (wakeUpQueue) {
      const wakeUpPoll = make('wake-up', 'WakeUpPoll', 'poll consumers on wake-up messages');
      subscribeWakeUps(wakeUpPoll, wakeUpQueue.queue);
      sendsWakeUps(wakeUpPoll);
      new CfnOutput(this, 'WakeUpQueueUrl', { value: wakeUpQueue.queue.queueUrl });
      if (!sqsTarget) {
        Annotations.of(this).addWarningV2('saga-streams:wake-up-unsent', 'consumers have wakeUp: true but no sqs wake-up target is configured: publishes send no wake-ups; they poll on schedule only');
      }
    }

    if (config.data.trim) trimSchedule(this, config.name, make('trim', 'Trim', 'trim, DLT retention, reaper, backlog metrics'), config.data.trim.schedule);
    else Annotations.of(this).addWarningV2('saga-streams:no-trim', 'no trim section: streams grow without bound and no backlog metrics (oldest-pending alarms) exist');

    if (config.data.publishApi) {
      const publish = make('publish', 'Publish', 'HTTP publish API');
      sendsWakeUps(publish);
      // Producers authenticate with bearer tokens inside the app (constant-time compare).
      const url = publish.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
      new CfnOutput(this, 'PublishUrl', { value: url.url });
    }

    new SagaAlarms(
      this,
      'Alarms',
      {
        deployment: config.name,
        consumers: [...config.consumers.values()],
        backlogProbed: config.data.trim !== undefined,
        functions: this.functions,
        wakeUpDeadLetters: wakeUpQueue?.deadLetters,
      },
      props.alarms,
    );
  }
}
