/**
 * Lambda test fixtures: a small deployment (one signed stream polled on a schedule and on
 * wake-ups, one exclusive stream polled on wake-ups only), real event shapes as AWS sends
 * them, a context whose remaining time the test sets, and dependencies that point the
 * handlers at the private test Redis and record what they log and open.
 */
import type { Context, LambdaFunctionURLEvent, ScheduledEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { inject } from 'vitest';
import { entryConsumer } from '../../src/deployment/consumers';
import { defineConfig, type DeploymentConfig } from '../../src/deployment/define-config';
import type { SecretEnv } from '../../src/deployment/secrets';
import { meterPort, type MeteredPort } from '../../src/redis/metered';
import { Rejection } from '../../src/verdict/verdict';
import { connectDeployment, type LambdaDeps } from '../../functions/aws/lib/deps';
import type { SecretFetcher } from '../../functions/aws/lib/secret-env';

export const SHOP_TOKEN = 'shop-token-0123456789abcdef';
export const SETTLE_RESERVE_MS = 500;

export function baseEnv(): Record<string, string> {
  return {
    REDIS_URL: inject('redisUrl'),
    ORDERS_KEY: 'hex:00112233445566778899aabbccddeeff',
    SHOP_TOKEN,
    WAKEUP_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/shop-wake-up',
  };
}

export interface Streams {
  readonly orders: string;
  readonly audit: string;
}

export function streamsFor(prefix: string): Streams {
  return { orders: `${prefix}:{o}:orders`, audit: `${prefix}:{a}:audit` };
}

/** What the handlers saw: every delivery's deadline, by consumer. */
export interface Seen {
  readonly deadlines: Array<{ consumer: string; eventId: string; deadline: number }>;
}

export function deployment(prefix: string, seen: Seen = { deadlines: [] }): DeploymentConfig {
  const { orders, audit } = streamsFor(prefix);
  const settings = { runBudgetMs: 20_000, minIdleMs: 60_000, settleReserveMs: SETTLE_RESERVE_MS };
  return defineConfig({
    name: 'shop',
    redis: { tcp: { urlEnv: 'REDIS_URL' } },
    streams: {
      [orders]: { auth: { mode: 'hmac', keyId: 'shop-1', keyEnv: 'ORDERS_KEY', producer: 'shop' } },
      [audit]: { auth: { mode: 'exclusive-stream', producer: 'shop' } },
    },
    routes: { 'order.placed': orders, 'audit.logged': audit },
    consumers: {
      fulfil: {
        stream: orders,
        group: 'fulfil',
        schedule: '* * * * *',
        wakeUp: true,
        settings,
        handler: entryConsumer(({ eventId, deadline }) => {
          seen.deadlines.push({ consumer: 'fulfil', eventId, deadline });
        }),
      },
      audit: {
        stream: audit,
        group: 'audit',
        wakeUp: true,
        settings,
        // `retain` payloads stay pending (a transient failure); `reject` ones are dead-lettered.
        handler: entryConsumer((delivery) => {
          const text = new TextDecoder().decode(delivery.payload);
          if (text === 'retain') throw new Error('downstream unavailable');
          if (text === 'reject') throw new Rejection('audit_rejected');
        }),
      },
    },
    publishApi: { producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed', 'audit.logged'] } } },
    trim: { schedule: '*/5 * * * *' },
    wakeUp: { kind: 'sqs', queueUrlEnv: 'WAKEUP_QUEUE_URL' },
  });
}

/** Dependencies recording log lines and the ports the handler opened (metered, to count round trips). */
export interface Harness {
  readonly deps: LambdaDeps;
  readonly lines: string[];
  readonly ports: MeteredPort[];
  /** Parsed log lines. */
  logged(): Array<Record<string, unknown>>;
  roundTrips(): number;
  close(): Promise<void>;
}

export function harness(options: { env?: SecretEnv; now?: () => number; fetchSecret?: SecretFetcher } = {}): Harness {
  const lines: string[] = [];
  const ports: MeteredPort[] = [];
  const env = options.env ?? baseEnv();
  return {
    deps: {
      env,
      fetchSecret: options.fetchSecret ?? (() => Promise.reject(new Error('no secret store in this test'))),
      connect: async (config, resolved) => {
        const port = meterPort(await connectDeployment(config, resolved));
        ports.push(port);
        return port;
      },
      now: options.now ?? Date.now,
      log: (line) => lines.push(line),
    },
    lines,
    ports,
    logged: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    roundTrips: () => ports.reduce((sum, port) => sum + port.roundTrips, 0),
    close: async () => {
      await Promise.all(ports.map((port) => port.close()));
    },
  };
}

/** A Lambda context whose remaining time is `remainingMs` at every call. */
export function lambdaContext(remainingMs: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'shop-poll',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:shop-poll',
    memoryLimitInMB: '256',
    awsRequestId: '5a6f0c1e-7d2b-4c8e-9a31-0f2d6b7c8e90',
    logGroupName: '/aws/lambda/shop-poll',
    logStreamName: '2026/04/26/[$LATEST]0123456789abcdef0123456789abcdef',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The event the stack's rule sends: EventBridge's Scheduled Event, `detail` naming the consumer. */
export function scheduledEvent<D>(detail: D): ScheduledEvent<D> {
  return {
    version: '0',
    id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: '2026-04-26T12:00:00Z',
    region: 'eu-west-1',
    resources: ['arn:aws:events:eu-west-1:123456789012:rule/shop-poll-fulfil'],
    detail,
  };
}

export function sqsRecord(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `AQEB${messageId.replace(/-/g, '')}==`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1777204800000',
      SenderId: 'AROAEXAMPLE:shop-publish',
      ApproximateFirstReceiveTimestamp: '1777204800050',
    },
    messageAttributes: {},
    md5OfBody: '0'.repeat(32),
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:shop-wake-up',
    awsRegion: 'eu-west-1',
  };
}

export function sqsEvent(...records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/** A Lambda Function URL request (payload format 2.0). */
export function functionUrlEvent(request: { method: string; path: string; headers: Record<string, string>; body?: string }): LambdaFunctionURLEvent {
  const body = request.body === undefined ? undefined : Buffer.from(request.body).toString('base64');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: request.path,
    rawQueryString: '',
    headers: { host: 'abcdefghijklmnop.lambda-url.eu-west-1.on.aws', 'x-forwarded-proto': 'https', ...request.headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnop',
      domainName: 'abcdefghijklmnop.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abcdefghijklmnop',
      http: { method: request.method, path: request.path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'curl/8.5.0' },
      requestId: '7d1c2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f',
      routeKey: '$default',
      stage: '$default',
      time: '26/Apr/2026:12:00:00 +0000',
      timeEpoch: 1777204800000,
    },
    body,
    isBase64Encoded: body !== undefined,
  };
}
