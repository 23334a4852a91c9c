/**
 * The CDK stack of the example deployment (saga.config.ts), synthesized once offline and
 * checked with CDK assertions: schedules and their targets, the wake-up queue with its own
 * DLQ and partial batch responses, Node.js 22, timeouts below every minIdle, IAM scoped to
 * the named secrets each function uses, alarms. Configs that cannot be deployed safely fail
 * synthesis. CDK output and cache stay in a private temp folder (cdk-sandbox).
 */
import { sandbox } from './cdk-sandbox';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../saga.config';
import { toEventBridgeCron } from '../../src/deployment/cron';
import { pollTimeoutMs } from '../../functions/aws/lib/budget';
import { consumersOf, secretNamesOf, type FunctionRole } from '../../functions/aws/lib/roles';
import { defaultSecretSources, type SecretSources } from '../../infra/aws/secrets';
import { SagaStreamsStack } from '../../infra/aws/stack';
import { variant } from './config-variants';

/** The stack reads its config from this module, the one its functions bundle. */
const ENTRY = fileURLToPath(new URL('../../saga.config.ts', import.meta.url));
const RUNTIME_MODULE = fileURLToPath(new URL('../../functions/aws/index.ts', import.meta.url));
const SOURCES: SecretSources = defaultSecretSources(config, { REDIS_URL: { ssmParameter: '/order-saga/redis-url' } });
/** Skips esbuild for stacks built only to check validation or structure. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

let app: App;
let stack: SagaStreamsStack;
let template: Template;

beforeAll(() => {
  app = new App({ outdir: sandbox.path('cdk.out') });
  // `config` is what ENTRY exports, loaded here: the example package imports saga-streams by
  // name, which in this checkout only tsconfig-paths-aware loaders (vitest, tsx, esbuild)
  // resolve to the sources, and the construct's jiti is not one of them.
  stack = new SagaStreamsStack(app, 'OrderSaga', { entry: ENTRY, config, runtimeModule: RUNTIME_MODULE, secrets: SOURCES });
  template = Template.fromStack(stack);
}, 120_000);
afterAll(() => sandbox.remove());

const logicalId = (fn: lambda.Function) => stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
const fnOf = (role: FunctionRole) => stack.functions[role]!;
const propsOf = (role: FunctionRole) => template.toJSON().Resources[logicalId(fnOf(role))].Properties as Record<string, any>;

/** A resource as text: an ARN joined from its parts, tokens shown as <token>. */
function resourceText(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  return join ? join[1].map((part) => (typeof part === 'string' ? part : '<token>')).join(join[0]) : JSON.stringify(resource);
}

/** Secret and parameter names `role`'s function may read, from its IAM policy. */
function readableSecrets(role: FunctionRole): string[] {
  const roleId = stack.getLogicalId(fnOf(role).role!.node.defaultChild as iam.CfnRole);
  const policies = Object.values(template.findResources('AWS::IAM::Policy') as Resources).filter((p) =>
    (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })),
  );
  const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
  return statements
    .filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:') || a.startsWith('ssm:')))
    .flatMap((s) => [s.Resource].flat().map(resourceText))
    .map((arn) => arn.match(/:secret:(.+)-\?{6}$/)?.[1] ?? arn.match(/:parameter(\/.+)$/)?.[1] ?? `unscoped ${arn}`)
    .sort();
}

function sourceName(variable: string): string {
  const source = SOURCES[variable]!;
  return 'ssmParameter' in source ? source.ssmParameter : source.secretsManager;
}

describe('AWS stack of the example deployment', () => {
  it('runs every function on Node.js 22 (arm64) with the Parameters and Secrets extension layer', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources);
    expect(functions).toHaveLength(4);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
      expect(JSON.stringify(fn.Properties.Layers)).toContain('ParamsandsecretslayerMap');
    }
  });

  it('bundles each entry with the local esbuild, the AWS SDK left to the runtime', () => {
    const assembly = app.synth();
    const bundles = readdirSync(assembly.directory).filter((name) => name.startsWith('asset.'));
    expect(bundles).toHaveLength(4);
    const code = bundles.map((dir) => readFileSync(join(assembly.directory, dir, 'index.js'), 'utf8'));
    expect(code.every((js) => js.includes('handler'))).toBe(true);
    // ioredis's `debug` is the construct's stub (bundleAliases), not the package.
    expect(code.filter((js) => js.includes('inspectOpts'))).toEqual([]);
    // Every function whose publishers send wake-ups uses SQS; the SDK is imported on first
    // send (never at start-up) and never bundled.
    const sqsBundles = code.filter((js) => js.includes('@aws-sdk/client-sqs'));
    expect(sqsBundles.length).toBeGreaterThanOrEqual(3);
    for (const js of sqsBundles) {
      expect(js).toMatch(/import\("@aws-sdk\/client-sqs"\)/);
      expect(js).not.toMatch(/require\("@aws-sdk\/client-sqs"\)/);
      expect(js).not.toContain('class SQSClient');
    }
  });

  it('schedules one rule per scheduled consumer, its Scheduled Event input naming the consumer', () => {
    const scheduled = consumersOf(config, 'poll');
    // Every rule on the poll function but the relay's (its own test below) names a consumer.
    const pollRules = Object.values(template.findResources('AWS::Events::Rule') as Resources).filter(
      (rule) =>
        JSON.stringify(rule.Properties.Targets[0].Arn) === JSON.stringify({ 'Fn::GetAtt': [logicalId(fnOf('poll')), 'Arn'] }) &&
        rule.Properties.Targets[0].Input !== JSON.stringify({ job: 'relay' }),
    );
    expect(pollRules).toHaveLength(scheduled.length);
    const byConsumer = new Map(
      pollRules.map((rule) => {
        const transformer = rule.Properties.Targets[0].InputTransformer as { InputTemplate: string; InputPathsMap: Record<string, string> };
        // Fill EventBridge's placeholders as it would, then read the event the handler gets.
        const event = JSON.parse(transformer.InputTemplate.replace(/<([a-z-]+)>/g, (_, key: string) => (key === 'resources' ? '["arn"]' : `"${key}"`)));
        expect(transformer.InputPathsMap).toMatchObject({ 'detail-type': '$.detail-type', time: '$.time' });
        return [event.detail.consumer as string, { event, expression: rule.Properties.ScheduleExpression as string }];
      }),
    );
    for (const plan of scheduled) {
      expect(byConsumer.get(plan.name)).toMatchObject({
        expression: toEventBridgeCron(plan.schedule!),
        event: { 'detail-type': 'detail-type', source: 'source', detail: { consumer: plan.name } },
      });
    }
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(0/15 * * * ? *)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(fnOf('trim')), 'Arn'] } })],
    });
  });

  it('runs the outbox relay on its own rule (postgres.relay.schedule), input {"job":"relay"}, through the poll function', () => {
    const rules = Object.values(template.findResources('AWS::Events::Rule')) as Array<{ Properties: { ScheduleExpression: string; Targets: Array<{ Input?: string; Arn: unknown }> } }>;
    const relayRules = rules.filter((rule) => rule.Properties.Targets[0]?.Input === JSON.stringify({ job: 'relay' }));
    expect(relayRules).toHaveLength(1);
    expect(relayRules[0]!.Properties.ScheduleExpression).toBe('cron(* * * * ? *)');
    expect(relayRules[0]!.Properties.Targets[0]!.Arn).toEqual({ 'Fn::GetAtt': [logicalId(fnOf('poll')), 'Arn'] });
  });

  it('feeds the wake-up function from its SQS queue with partial batch responses; the queue has its own DLQ', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping') as Resources);
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!.Properties;
    expect(mapping).toMatchObject({ FunctionName: { Ref: logicalId(fnOf('wake-up')) }, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const queueId = (mapping.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const queues = template.findResources('AWS::SQS::Queue') as Resources;
    expect(Object.keys(queues)).toHaveLength(2);
    const queue = queues[queueId]!.Properties;
    const dlqId = queue.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0] as string;
    expect(dlqId).not.toBe(queueId);
    expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThan(1);
    expect(queues[dlqId]!.Properties.RedrivePolicy).toBeUndefined();
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(propsOf('wake-up').Timeout);
  });

  it('derives poll timeouts from the run budgets, below every consumer minIdle', () => {
    for (const role of ['poll', 'wake-up'] as const) {
      const plans = consumersOf(config, role);
      const timeoutMs = propsOf(role).Timeout * 1_000;
      expect(timeoutMs).toBe(pollTimeoutMs(plans.map((plan) => plan.config)));
      for (const plan of plans) {
        expect(timeoutMs).toBeGreaterThan(plan.config.runBudgetMs);
        expect(plan.config.minIdleMs).toBeGreaterThan(timeoutMs);
      }
    }
  });

  it('lets each function read exactly the secrets it uses, each by name (no wildcard resource)', () => {
    for (const role of ['poll', 'wake-up', 'trim', 'publish'] as const) {
      const names = secretNamesOf(config, role);
      expect(readableSecrets(role)).toEqual(names.map(sourceName).sort());
      const pointers = Object.keys(propsOf(role).Environment.Variables).filter((key) => key.endsWith('_SECRET_ID'));
      expect(pointers.sort()).toEqual(names.map((name) => `${name}_SECRET_ID`).sort());
    }
    expect(readableSecrets('trim')).toEqual(['/order-saga/redis-url']);
    expect(readableSecrets('poll')).not.toContain(sourceName('SHOP_PRODUCER_TOKEN'));
    expect(readableSecrets('publish')).not.toContain(sourceName('INVENTORY_COMMAND_KEY'));
    const everyResource = Object.values(template.findResources('AWS::IAM::Policy') as Resources).flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as Array<{ Resource: unknown }>).flatMap((s) => [s.Resource].flat()),
    );
    expect(everyResource).not.toContain('*');
  });

  it('serves the publish API on a Function URL and lets it send wake-ups to the queue', () => {
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [logicalId(fnOf('publish')), 'Arn'] } });
    const queueRef = propsOf('publish').Environment.Variables.WAKEUP_QUEUE_URL as { Ref: string };
    expect(template.toJSON().Resources[queueRef.Ref].Type).toBe('AWS::SQS::Queue');
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(['sqs:SendMessage']), Resource: { 'Fn::GetAtt': [queueRef.Ref, 'Arn'] } })]) },
    });
  });

  it('gives the poll and wake-up functions the queue too (handlers\' follow-up events wake the next step), never the trim function', () => {
    const queueRef = propsOf('publish').Environment.Variables.WAKEUP_QUEUE_URL as { Ref: string };
    for (const role of ['poll', 'wake-up'] as const) {
      expect(propsOf(role).Environment.Variables.WAKEUP_QUEUE_URL).toEqual(queueRef);
    }
    expect(propsOf('trim').Environment.Variables.WAKEUP_QUEUE_URL).toBeUndefined();
    const senders = Object.values(template.findResources('AWS::IAM::Policy') as Resources).filter((policy) =>
      JSON.stringify(policy.Properties.PolicyDocument.Statement).includes('sqs:SendMessage'),
    );
    expect(senders).toHaveLength(3);
  });

  it('alarms per consumer on oldest-pending age, lag, deleted-pending, auth rejections, flow keys closed too long and (scheduled ones) not running, from the EMF metrics', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources).map((a) => a.Properties);
    const watched = alarms
      .filter((a) => a.Namespace === 'SagaStreams')
      .map((a) => {
        const dims = Object.fromEntries((a.Dimensions as Array<{ Name: string; Value: string }>).map((d) => [d.Name, d.Value]));
        expect(Object.keys(dims).sort()).toEqual(['Consumer', 'Deployment']);
        expect(dims.Deployment).toBe('order-saga');
        return `${dims.Consumer} ${a.MetricName}`;
      });
    // Every consumer here is a saga consumer naming no flow, so strict order (SAGA_FLOW): keys can close, and stay closed too long.
    const perConsumer = ['oldestPendingAgeMs', 'lag', 'deletedPending', 'authRejected', 'flowClosedOverAge'];
    const expected = [...config.consumers.values()].flatMap((plan) => [...perConsumer, ...(plan.schedule ? ['durationMs'] : [])].map((m) => `${plan.name} ${m}`));
    expect(watched.sort()).toEqual(expected.sort());
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Namespace: 'AWS/SQS' });
  });
});

describe('configs the stack refuses', () => {
  const build = (cfg: ReturnType<typeof variant>, secrets: SecretSources = defaultSecretSources(cfg)) =>
    new SagaStreamsStack(new App({ outdir: sandbox.path('refused'), context: NO_BUNDLING }), 'Variant', { entry: ENTRY, config: cfg, secrets, secretDefaults: false });

  it('fails synthesis when a consumer minIdle is not above its function timeout, naming the field and the numbers', () => {
    const timeoutMs = pollTimeoutMs([variant({ minIdleMs: 60_000 }).consumers.get('fulfil')!.config]);
    expect(() => build(variant({ minIdleMs: timeoutMs }))).toThrow(
      `consumers.fulfil.settings.minIdleMs: ${timeoutMs} ms must exceed the poll function's timeout of ${timeoutMs} ms (longest runBudgetMs 20000`,
    );
    expect(() => build(variant({ minIdleMs: timeoutMs + 1 }))).not.toThrow();
  });

  it('lists every problem at once: unmapped secrets, SQS wake-ups nobody receives, a timeout beyond Lambda', () => {
    const cfg = variant({ minIdleMs: 2_000_000, runBudgetMs: 1_000_000, sendsWakeUps: true });
    let message = '';
    try {
      build(cfg, {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('invalid AWS stack for deployment "variant"');
    expect(message).toMatch(/consumers: the poll function would need a 1003000 ms timeout .*Lambda allows 900000 ms/);
    expect(message).toContain('secrets.ORDERS_KEY: names no Secrets Manager secret or SSM parameter');
    expect(message).toContain('secrets.REDIS_URL: names no Secrets Manager secret or SSM parameter');
    expect(message).toContain('wakeUp: sends SQS wake-ups, but no consumer has wakeUp: true');
  });

  it('warns when there is no trim schedule, and then has no oldest-pending alarm', () => {
    const stack = build(variant({ minIdleMs: 60_000, wakeUpConsumer: true, trim: false }));
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('no trim section'));
    const template = Template.fromStack(stack);
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'oldestPendingAgeMs' }, 0);
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'deletedPending' }, 1);
    expect(stack.functions.trim).toBeUndefined();
  });
});
