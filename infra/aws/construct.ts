/**
 * `new SagaStreams(this, 'Orders', { entry: 'src/saga.ts' })`: the AWS side of a deployment,
 * read from the user's module and bundling that same module — the scheduled poll function
 * (one EventBridge rule per scheduled consumer), the wake-up poll function on its SQS queue
 * (with that queue's own DLQ), the trim function on `trim.schedule`, the publish function
 * behind a Function URL, least-privilege secret access, reserved concurrency per function,
 * alarms notifying an SNS topic, optionally a VPC. A config that cannot be
 * deployed safely (minIdleMs not above a function timeout, unmapped secrets, SQS wake-ups
 * without a consumer) fails synthesis listing every problem.
 */
import { dirname } from 'node:path';
import { Annotations, CfnOutput, Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigError, type ConfigProblem } from '../../src/ground/errors';
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { CONSUMER_ENV, consumersOf, secretNamesOf, type FunctionRole } from '../../functions/aws/lib/roles';
import { WAKE_UP_QUEUES_ENV } from '../../functions/aws/lib/sqs-wake-up';
import { SagaAlarms, type AlarmOptions, type AlarmTargets } from './alarms';
import { sagaFunction } from './function';
import { bundleExternals, findLockFile, writeHandlerFile } from './handler-file';
import { absoluteEntry, loadEntryConfig } from './load-entry';
import { reservedConcurrency, SQS_MIN_MAX_CONCURRENCY, wakeUpMaxConcurrency, type ReservedConcurrency } from './concurrency';
import { backlogProbeSchedule, pollSchedules, relaySchedule, trimSchedule } from './schedules';
import { defaultSecretSources, missingSources, SecretGrants, type SecretSources } from './secrets';
import { consumerTimeoutMs, deriveTimeouts, type FunctionTimeouts } from './timeouts';
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
  /** The topic every alarm notifies. Default: a topic created here (`alarmTopic` on the construct). */
  readonly alarmTopic?: sns.ITopic;
  /** false: alarms without actions (no topic is created). */
  readonly alarmActions?: boolean;
  /**
   * Reserved concurrency per function role (infra/aws/concurrency.ts): caps each function and
   * guarantees it that much, so the public publish URL cannot starve the pollers. Merged over
   * the defaults; `false` reserves nothing (accounts with a low concurrency limit).
   */
  readonly reservedConcurrency?: ReservedConcurrency | false;
  /** Runs every function in this VPC (ElastiCache, MemoryDB); see FunctionNetwork for the routes it then needs. */
  readonly vpc?: ec2.IVpc;
  readonly vpcSubnets?: ec2.SubnetSelection;
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * One function per consumer, holding that consumer's signing and verification keys only
   * (plus its own wake-up queue), and the outbox relay in a function of its own — instead of
   * one poll and one wake-up function holding every consumer's keys. Default false.
   */
  readonly isolateConsumers?: boolean;
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
  /** With `isolateConsumers`: each consumer's own function, by consumer name. */
  readonly consumerFunctions: Record<string, lambda.Function> = {};
  /** The topic the alarms notify (undefined with `alarmActions: false`). */
  readonly alarmTopic: sns.ITopic | undefined;

  constructor(scope: Construct, id: string, props: SagaStreamsProps) {
    super(scope, id);
    const entry = absoluteEntry(props.entry);
    const exportName = props.exportName ?? 'default';
    const config = (this.config = props.config ?? loadEntryConfig(entry, exportName));
    const sources = props.secretDefaults === false ? (props.secrets ?? {}) : defaultSecretSources(config, props.secrets);
    const { timeouts, problems } = deriveTimeouts(config, props.isolateConsumers === true);
    problems.push(...missingSources(config, sources), ...wakeUpProblems(config));
    if (problems.length > 0) throw new ConfigError(`AWS stack for deployment "${config.name}"`, problems);

    const lockFile = findLockFile(entry);
    const projectRoot = dirname(lockFile);
    const runtimeModule = props.runtimeModule ?? 'saga-streams/aws';
    const grants = new SecretGrants(this, 'Secrets', sources);
    const reserved = reservedConcurrency(config, props.reservedConcurrency);
    const network = props.vpc ? { vpc: props.vpc, vpcSubnets: props.vpcSubnets, securityGroups: props.securityGroups } : undefined;
    const make = (role: FunctionRole, id: string, description: string, only?: string) => {
      const fn = sagaFunction(this, id, {
        role,
        timeoutMs: only === undefined ? timeouts[role] : consumerTimeoutMs(config, only),
        memorySizeMb: props.memorySizeMb ?? 512,
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        description: `${config.name}: ${description}`,
        entry: writeHandlerFile({ entry, exportName, role, projectRoot, runtimeModule, runsRelay: role === 'poll' && config.data.postgres?.relay !== undefined }),
        projectRoot,
        lockFile,
        externals: bundleExternals(config),
        reservedConcurrency: reserved[role],
        network,
      });
      grants.bind(fn, secretNamesOf(config, role, only));
      if (only === undefined) this.functions[role] = fn;
      else {
        fn.addEnvironment(CONSUMER_ENV, only);
        this.consumerFunctions[only] = fn;
      }
      return fn;
    };

    const sqsTarget = config.wakeUpTarget('sqs');
    const layout = props.isolateConsumers ? this.#isolated(config, make, sqsTarget) : this.#shared(config, make, reserved, sqsTarget, timeouts);
    if (layout.queues.length > 0 && !sqsTarget) {
      Annotations.of(this).addWarningV2('saga-streams:wake-up-unsent', 'consumers have wakeUp: true but no sqs wake-up target is configured: publishes send no wake-ups; they poll on schedule only');
    }

    if (config.data.trim) {
      const trim = make('trim', 'Trim', 'trim, DLT retention, reaper, backlog metrics');
      trimSchedule(this, config.name, trim, config.data.trim.schedule);
      backlogProbeSchedule(this, config.name, trim);
    } else Annotations.of(this).addWarningV2('saga-streams:no-trim', 'no trim section: streams grow without bound and no backlog metrics (oldest-pending alarms) exist');

    if (config.data.publishApi) {
      const publish = make('publish', 'Publish', 'HTTP publish API');
      layout.sendsWakeUps(publish);
      // Producers authenticate with bearer tokens inside the app (constant-time compare).
      // Function URLs have no throttling of their own: the function's reserved concurrency
      // caps it (429 beyond) and keeps a flood, 401s included, off the pollers' capacity.
      const url = publish.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
      new CfnOutput(this, 'PublishUrl', { value: url.url });
    }

    this.alarmTopic = props.alarmActions === false ? undefined : (props.alarmTopic ?? new sns.Topic(this, 'AlarmTopic', { displayName: `${config.name} saga-streams alarms` }));
    if (this.alarmTopic) new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
    new SagaAlarms(
      this,
      'Alarms',
      {
        deployment: config.name,
        consumers: [...config.consumers.values()],
        backlogProbed: config.data.trim !== undefined,
        functions: { ...this.functions, ...Object.fromEntries(Object.entries(this.consumerFunctions).map(([name, fn]) => [`consumer-${name}`, fn])) },
        wakeUpQueues: layout.queues,
        wakeUpDeadLetters: layout.deadLetters,
        topic: this.alarmTopic,
      },
      props.alarms,
    );
  }

  /** One poll function for every scheduled consumer (and the relay), one wake-up function on one queue. */
  #shared(config: DeploymentConfig, make: MakeFunction, reserved: ReservedConcurrency, sqsTarget: SqsTarget, timeouts: FunctionTimeouts): Layout {
    const wakeUp = consumersOf(config, 'wake-up').length > 0 ? wakeUpQueues(this, timeouts['wake-up']) : undefined;
    /** A function whose publishers (API or handlers) send wake-ups gets the queue URL and SendMessage on it only. */
    const sendsWakeUps = (fn: lambda.Function) => {
      if (!sqsTarget || !wakeUp) return;
      fn.addEnvironment(sqsTarget.queueUrlEnv, wakeUp.queue.queueUrl);
      wakeUp.queue.grantSendMessages(fn);
    };
    const scheduled = consumersOf(config, 'poll');
    const relay = config.data.postgres?.relay;
    if (scheduled.length > 0 || relay) {
      const poll = make('poll', 'Poll', relay ? 'poll consumers on their schedules; run the outbox relay' : 'poll consumers on their schedules');
      pollSchedules(this, config.name, poll, scheduled);
      if (relay) relaySchedule(this, config.name, poll, relay.schedule);
      sendsWakeUps(poll);
    }
    if (wakeUp) {
      const wakeUpPoll = make('wake-up', 'WakeUpPoll', 'poll consumers on wake-up messages');
      subscribeWakeUps(wakeUpPoll, wakeUp.queue, wakeUpMaxConcurrency(reserved['wake-up']));
      sendsWakeUps(wakeUpPoll);
      new CfnOutput(this, 'WakeUpQueueUrl', { value: wakeUp.queue.queueUrl });
    }
    return { sendsWakeUps, queues: wakeUp ? [{ queue: wakeUp.queue }] : [], deadLetters: wakeUp?.deadLetters };
  }

  /**
   * One function per consumer holding that consumer's keys only: its schedule's rule and its
   * own wake-up queue (one DLQ for all); the relay in a function of its own. Publishers send
   * each wake-up to the queues of the consumers it wakes (WAKE_UP_QUEUES_ENV).
   */
  #isolated(config: DeploymentConfig, make: MakeFunction, sqsTarget: SqsTarget): Layout {
    const wakeUpPlans = consumersOf(config, 'wake-up');
    let deadLetters: sqs.Queue | undefined;
    const queues = new Map<string, sqs.Queue>();
    for (const plan of wakeUpPlans) {
      const made = wakeUpQueues(this, consumerTimeoutMs(config, plan.name), { id: `WakeUpQueue-${plan.name}`, deadLetters });
      deadLetters = made.deadLetters;
      queues.set(plan.name, made.queue);
    }
    const urls = Stack.of(this).toJsonString(Object.fromEntries([...queues].map(([name, queue]) => [name, queue.queueUrl])));
    const sendsWakeUps = (fn: lambda.Function) => {
      if (!sqsTarget || queues.size === 0) return;
      fn.addEnvironment(WAKE_UP_QUEUES_ENV, urls);
      for (const queue of queues.values()) queue.grantSendMessages(fn);
    };
    for (const plan of config.consumers.values()) {
      if (plan.schedule === undefined && !plan.wakeUp) continue;
      const fn = make('consumer', `Consumer-${plan.name}`, `poll consumer ${plan.name}`, plan.name);
      if (plan.schedule !== undefined) pollSchedules(this, config.name, fn, [plan]);
      const queue = queues.get(plan.name);
      // One consumer per queue, at most its function's reservation at once.
      if (queue) subscribeWakeUps(fn, queue, SQS_MIN_MAX_CONCURRENCY);
      sendsWakeUps(fn);
    }
    const relay = config.data.postgres?.relay;
    if (relay) {
      const fn = make('relay', 'Relay', 'run the outbox relay');
      relaySchedule(this, config.name, fn, relay.schedule);
      sendsWakeUps(fn);
    }
    return { sendsWakeUps, queues: [...queues].map(([consumer, queue]) => ({ consumer, queue })), deadLetters };
  }
}

type MakeFunction = (role: FunctionRole, id: string, description: string, only?: string) => lambda.Function;
type SqsTarget = { readonly queueUrlEnv: string } | undefined;

interface Layout {
  sendsWakeUps(fn: lambda.Function): void;
  readonly queues: AlarmTargets['wakeUpQueues'];
  readonly deadLetters?: sqs.IQueue;
}
