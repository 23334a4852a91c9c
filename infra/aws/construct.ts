/**
 * `new SagaStreams(this, 'Orders', { entry: 'src/saga.ts' })`: the AWS side of a deployment,
 * read from the user's module and bundling that same module — the scheduled poll function
 * (one EventBridge rule per scheduled consumer), the wake-up poll function on its SQS queue
 * (with that queue's own DLQ), the trim function on `trim.schedule`, the publish function
 * behind a Function URL, least-privilege secret access and alarms. A config that cannot be
 * deployed safely (minIdleMs not above a function timeout, unmapped secrets, SQS wake-ups
 * without a consumer) fails synthesis listing every problem.
 */
import { dirname } from 'node:path';
import { Annotations, CfnOutput } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ConfigError, type ConfigProblem } from '../../src/ground/errors';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { consumersOf, secretNamesOf, type FunctionRole } from '../../functions/aws/lib/roles';
import { SagaAlarms, type AlarmOptions } from './alarms';
import { sagaFunction } from './function';
import { bundleExternals, findLockFile, writeHandlerFile } from './handler-file';
import { absoluteEntry, loadEntryConfig } from './load-entry';
import { pollSchedules, relaySchedule, trimSchedule } from './schedules';
import { defaultSecretSources, missingSources, SecretGrants, type SecretSources } from './secrets';
import { deriveTimeouts } from './timeouts';
import { subscribeWakeUps, wakeUpQueues } from './wake-up-queue';

export interface SagaStreamsProps {
  /** The module exporting the deployment config (`export default defineConfig(...)`), e.g. `src/saga.ts`. */
  readonly entry: string;
  /** The export holding the config (default: `default`). */
  readonly exportName?: string;
  /**
   * Where each secret variable lives: Secrets Manager secret or SSM parameter name. Merged
   * over the default Secrets Manager secret `<deployment>/<VARIABLE>` unless `secretDefaults`
   * is false.
   */
  readonly secrets?: SecretSources;
  readonly secretDefaults?: boolean;
  readonly alarms?: AlarmOptions;
  readonly memorySizeMb?: number;
  readonly logRetention?: logs.RetentionDays;
  /** Module the generated handlers import `createLambdaHandlers` from (default `saga-streams/aws`). */
  readonly runtimeModule?: string;
  /**
   * The config `entry` exports, already loaded (tests of synthesis-only cases). Default:
   * loaded from `entry`, which is what keeps infrastructure and code on one config.
   */
  readonly config?: DeploymentConfig;
}

function wakeUpProblems(config: DeploymentConfig): ConfigProblem[] {
  if (!config.wakeUpTarget('sqs') || consumersOf(config, 'wake-up').length > 0) return [];
  return [{ path: 'wakeUp', message: 'sends SQS wake-ups, but no consumer has wakeUp: true to receive them' }];
}

export class SagaStreams extends Construct {
  readonly config: DeploymentConfig;
  readonly functions: Partial<Record<FunctionRole, lambda.Function>> = {};

  constructor(scope: Construct, id: string, props: SagaStreamsProps) {
    super(scope, id);
    const entry = absoluteEntry(props.entry);
    const exportName = props.exportName ?? 'default';
    const config = (this.config = props.config ?? loadEntryConfig(entry, exportName));
    const sources = props.secretDefaults === false ? (props.secrets ?? {}) : defaultSecretSources(config, props.secrets);
    const { timeouts, problems } = deriveTimeouts(config);
    problems.push(...missingSources(config, sources), ...wakeUpProblems(config));
    if (problems.length > 0) throw new ConfigError(`AWS stack for deployment "${config.name}"`, problems);

    const lockFile = findLockFile(entry);
    const projectRoot = dirname(lockFile);
    const runtimeModule = props.runtimeModule ?? 'saga-streams/aws';
    const grants = new SecretGrants(this, 'Secrets', sources);
    const make = (role: FunctionRole, id: string, description: string) => {
      const fn = sagaFunction(this, id, {
        role,
        timeoutMs: timeouts[role],
        memorySizeMb: props.memorySizeMb ?? 512,
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        description: `${config.name}: ${description}`,
        entry: writeHandlerFile({ entry, exportName, role, projectRoot, runtimeModule }),
        projectRoot,
        lockFile,
        externals: bundleExternals(config),
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
    const relay = config.data.postgres?.relay;
    if (scheduled.length > 0 || relay) {
      const poll = make('poll', 'Poll', relay ? 'poll consumers on their schedules; run the outbox relay' : 'poll consumers on their schedules');
      pollSchedules(this, config.name, poll, scheduled);
      if (relay) relaySchedule(this, config.name, poll, relay.schedule);
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
