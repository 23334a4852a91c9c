/**
 * Issue 17 §3, the AWS guardrails, one assertion per guardrail on the example deployment's
 * stack (synthesized offline without bundling; aws-stack.test.ts covers the bundles):
 * reserved concurrency per function, the SQS trigger's maximum concurrency, EventBridge
 * targets without retries, the publish URL on its own reservation, alarm actions on every
 * alarm, the alarm set, the every-minute backlog probe, the VPC option, and isolated
 * consumers (`isolateConsumers`) holding only their own keys.
 */
import { sandbox } from './cdk-sandbox';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../saga.config';
import { consumersOf, secretNamesOf, type FunctionRole } from '../../functions/aws/lib/roles';
import { CONSUMER_DEFAULT, PUBLISH_DEFAULT, TRIM_DEFAULT, WAKE_UP_DEFAULT } from '../../infra/aws/concurrency';
import { BACKLOG_EVALUATION_MINUTES } from '../../infra/aws/alarms';
import { longestGapMinutes } from '../../infra/aws/schedules';
import { defaultSecretSources } from '../../infra/aws/secrets';
import { SagaStreams, type SagaStreamsProps } from '../../infra/aws/construct';

const ENTRY = fileURLToPath(new URL('../../saga.config.ts', import.meta.url));
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

/** The example deployment's construct in a stack of its own; `props` may build constructs in that stack. */
function synth(props: Partial<SagaStreamsProps> | ((stack: Stack) => Partial<SagaStreamsProps>) = {}) {
  const app = new App({ outdir: sandbox.path(`guardrails-${Math.random().toString(36).slice(2)}`), context: NO_BUNDLING });
  const stack = new Stack(app, 'Guarded');
  const extra = typeof props === 'function' ? props(stack) : props;
  const saga = new SagaStreams(stack, 'Saga', { entry: ENTRY, config, secrets: defaultSecretSources(config), ...extra });
  const template = Template.fromStack(stack);
  const logicalId = (fn: lambda.Function) => stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
  const fnProps = (role: FunctionRole) => (template.toJSON().Resources as Resources)[logicalId(saga.functions[role]!)]!.Properties;
  const alarms = () => Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources).map((a) => a.Properties);
  return { stack, saga, template, logicalId, fnProps, alarms };
}

let base: ReturnType<typeof synth>;
beforeAll(() => {
  base = synth();
}, 120_000);
afterAll(() => sandbox.remove());

describe('AWS guardrails', () => {
  it('reserves concurrency per function: one run per scheduled job for poll, then wake-up, trim and publish defaults; overridable, or off', () => {
    const scheduledJobs = consumersOf(config, 'poll').length + 1; // + the outbox relay
    const reserved = (s: ReturnType<typeof synth>) =>
      Object.fromEntries((['poll', 'wake-up', 'trim', 'publish'] as const).map((role) => [role, s.fnProps(role).ReservedConcurrentExecutions]));
    expect(reserved(base)).toEqual({ poll: scheduledJobs, 'wake-up': WAKE_UP_DEFAULT, trim: TRIM_DEFAULT, publish: PUBLISH_DEFAULT });
    expect(reserved(synth({ reservedConcurrency: { publish: 3 } }))).toMatchObject({ publish: 3, 'wake-up': WAKE_UP_DEFAULT });
    expect(Object.values(reserved(synth({ reservedConcurrency: false })))).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('bounds the SQS wake-up trigger at the wake-up function’s reservation (a burst of publishes waits in the queue)', () => {
    base.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: base.logicalId(base.saga.functions['wake-up']!) },
      ScalingConfig: { MaximumConcurrency: WAKE_UP_DEFAULT },
    });
  });

  it('gives every EventBridge target 0 retries and a 60 s maximum event age (no overlapping minute-polls)', () => {
    const targets = Object.values(base.template.findResources('AWS::Events::Rule') as Resources).flatMap((rule) => rule.Properties.Targets as Array<Record<string, unknown>>);
    expect(targets.length).toBe(consumersOf(config, 'poll').length + 3); // + relay, trim, backlog probe
    expect(targets.map((t) => t.RetryPolicy)).toEqual(targets.map(() => ({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 })));
  });

  it('isolates the public publish URL on its own reservation, apart from the pollers', () => {
    base.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [base.logicalId(base.saga.functions.publish!), 'Arn'] } });
    // Both sides reserved: a flood of requests (401s included) is capped at the publish
    // reservation (429 beyond) and cannot take what is reserved for the pollers.
    const reservation = (role: FunctionRole) => base.fnProps(role).ReservedConcurrentExecutions as number;
    expect([reservation('publish'), reservation('poll') + reservation('wake-up')]).toEqual([PUBLISH_DEFAULT, consumersOf(config, 'poll').length + 1 + WAKE_UP_DEFAULT]);
  });

  it('wires every alarm to the created SNS topic, to the user’s topic, or to none with alarmActions: false', () => {
    const topics = Object.keys(base.template.findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    expect(base.alarms().map((a) => a.AlarmActions)).toEqual(base.alarms().map(() => [{ Ref: topics[0] }]));

    const withTopic = synth((stack) => ({ alarmTopic: sns.Topic.fromTopicArn(stack, 'Ops', 'arn:aws:sns:eu-west-1:123456789012:ops') }));
    expect(new Set(withTopic.alarms().map((a) => JSON.stringify(a.AlarmActions)))).toEqual(new Set([JSON.stringify(['arn:aws:sns:eu-west-1:123456789012:ops'])]));
    withTopic.template.resourceCountIs('AWS::SNS::Topic', 0);

    const silent = synth({ alarmActions: false });
    silent.template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(silent.alarms().every((a) => a.AlarmActions === undefined)).toBe(true);
  });

  it('alarms on oldest-pending age per minute, missing data breaching (the backlog heartbeat)', () => {
    const oldest = base.alarms().filter((a) => a.MetricName === 'oldestPendingAgeMs');
    expect(oldest.map((a) => [a.Period, a.EvaluationPeriods, a.TreatMissingData])).toEqual(
      [...config.consumers.keys()].map(() => [60, BACKLOG_EVALUATION_MINUTES, 'breaching']),
    );
  });

  it('alarms when a scheduled consumer’s poller is not running (no poll run in twice its schedule’s gap; missing data breaching)', () => {
    const notRunning = base.alarms().filter((a) => a.MetricName === 'durationMs');
    expect(notRunning.map((a) => [a.Dimensions.find((d: { Name: string }) => d.Name === 'Consumer').Value, a.Statistic, a.ComparisonOperator, a.Threshold, a.TreatMissingData, a.Period]).sort()).toEqual(
      consumersOf(config, 'poll')
        .map((plan) => [plan.name, 'SampleCount', 'LessThanThreshold', 1, 'breaching', 60 * Math.max(5, 2 * longestGapMinutes(plan.schedule!))])
        .sort(),
    );
    expect([longestGapMinutes('* * * * *'), longestGapMinutes('*/15 * * * *'), longestGapMinutes('0 9 * * 1-5'), longestGapMinutes('0 0 1 1 *')]).toEqual([1, 15, 1_440, 1_440]);
  });

  it('alarms on consumer lag and on dead-letter growth per consumer', () => {
    const lag = base.alarms().filter((a) => a.MetricName === 'lag');
    const growth = base.alarms().filter((a) => (a.Metrics as Array<{ Expression?: string }> | undefined)?.some((m) => m.Expression === 'DIFF(deadLetters)'));
    expect([lag.length, growth.length]).toEqual([config.consumers.size, config.consumers.size]);
  });

  it('alarms on throttles of every function', () => {
    const throttled = base.alarms().filter((a) => a.MetricName === 'Throttles' && a.Namespace === 'AWS/Lambda');
    expect(throttled).toHaveLength(4);
  });

  it('alarms on the age of the oldest wake-up message in the queue', () => {
    base.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/SQS', MetricName: 'ApproximateAgeOfOldestMessage', Statistic: 'Maximum', Threshold: 300 });
  });

  it('runs the backlog probe alone every minute on the trim function (input {"job":"backlog"})', () => {
    base.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(* * * * ? *)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [base.logicalId(base.saga.functions.trim!), 'Arn'] }, Input: JSON.stringify({ job: 'backlog' }) })],
    });
  });

  it('puts every function in the given VPC (private subnets, a security group each)', () => {
    const inVpc = synth((stack) => ({ vpc: new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 }) }));
    const configs = Object.values(inVpc.template.findResources('AWS::Lambda::Function') as Resources)
      .filter((fn) => fn.Properties.Handler === 'index.handler')
      .map((fn) => fn.Properties.VpcConfig as { SubnetIds: unknown[]; SecurityGroupIds: unknown[] } | undefined);
    expect(configs.map((c) => [c?.SubnetIds.length, c?.SecurityGroupIds.length])).toEqual([
      [2, 1],
      [2, 1],
      [2, 1],
      [2, 1],
    ]);
  });

  it('isolateConsumers: each consumer’s function holds (env pointers and IAM grants) only its own keys, never another consumer’s', () => {
    const isolated = synth({ isolateConsumers: true });
    const resources = isolated.template.toJSON().Resources as Resources;
    const policies = Object.values(resources).filter((r) => r.Type === 'AWS::IAM::Policy');
    for (const [name, fn] of Object.entries(isolated.saga.consumerFunctions)) {
      const props = resources[isolated.logicalId(fn)]!.Properties;
      const pointers = Object.keys(props.Environment.Variables).filter((key) => key.endsWith('_SECRET_ID')).map((key) => key.slice(0, -'_SECRET_ID'.length));
      const roleRef = JSON.stringify({ Ref: isolated.stack.getLogicalId(fn.role!.node.defaultChild as iam.CfnRole) });
      const granted = policies
        .filter((p) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === roleRef))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
        .filter((st) => [st.Action].flat().some((a) => a.startsWith('secretsmanager:')))
        .map((st) => JSON.stringify(st.Resource).match(/secret:order-saga\/([A-Z_]+)-/)?.[1]);
      const own = secretNamesOf(config, 'consumer', name);
      const others = [...config.consumers.keys()].filter((b) => b !== name).flatMap((b) => config.secrets.consumer(b)).filter((key) => !own.includes(key));
      expect({ name, pointers: pointers.sort(), granted: granted.sort() }).toEqual({ name, pointers: [...own].sort(), granted: [...own].sort() });
      expect(others.filter((key) => pointers.includes(key) || granted.includes(key))).toEqual([]);
      expect([props.Environment.Variables.SAGA_STREAMS_CONSUMER, props.ReservedConcurrentExecutions]).toEqual([name, CONSUMER_DEFAULT]);
    }
    expect(Object.keys(isolated.saga.consumerFunctions).sort()).toEqual([...config.consumers.keys()].sort());
    expect([isolated.saga.functions.poll, isolated.saga.functions['wake-up'], isolated.saga.functions.relay !== undefined]).toEqual([undefined, undefined, true]);
    // Each wake-up consumer has its own queue, fed to its own function only.
    const mappings = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping');
    expect(new Set(mappings.map((m) => JSON.stringify(m.Properties.EventSourceArn))).size).toBe(consumersOf(config, 'wake-up').length);
  });
});
