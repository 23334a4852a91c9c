/**
 * A deployment end to end on every Redis client: the orchestrator publishes a command, the
 * participant's scheduled poll handles it and publishes a signed result with its own key,
 * the orchestrator's poll receives it from the authenticated producer; trim then runs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { commandConsumer, entryConsumer, resultConsumer } from '../../src/deployment/consumers';
import { errorCode } from '../../src/ground/errors';
import { defineConfig } from '../../src/deployment/define-config';
import { runPollJob, runTrimJob } from '../../src/deployment/jobs';
import { runLogLine } from '../../src/deployment/log';
import { createRuntime } from '../../src/deployment/runtime';
import { logLineProblems } from '../../src/deployment/log-line';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { encodeCommand, encodeResult } from '../../src/saga/envelopes';
import { clientKinds } from '../support/clients';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';

const DIGEST = 'b'.repeat(64);
const env = {
  CMD_KEY: 'hex:00112233445566778899aabbccddeeff',
  RESULT_KEY: 'inventory-result-key-0123456789',
  ORCH_TOKEN: 'token-not-used-here',
};

function deployment(prefix: string, seen: string[]) {
  const cmd = `${prefix}:{c}:cmd`;
  const results = `${prefix}:{r}:results`;
  return defineConfig({
    name: 'shop',
    redis: { tcp: {} },
    streams: {
      [cmd]: { auth: { mode: 'hmac', keyId: 'orch-1', keyEnv: 'CMD_KEY', producer: 'orchestrator' } },
      [results]: { auth: { mode: 'hmac-keyring', keys: { 'inv-1': { producer: 'inventory', keyEnv: 'RESULT_KEY' } } } },
    },
    routes: { 'inventory.reserve': cmd, 'inventory.result': results },
    consumers: {
      inventory: {
        stream: cmd,
        group: 'inventory',
        schedule: '* * * * *',
        publishesAs: ['inventory'],
        settings: { runBudgetMs: 5_000, minIdleMs: 10_000 },
        handler: commandConsumer({ workflow: 'order', definitionVersion: 1, definitionDigest: DIGEST, step: 'reserve' }, async ({ envelope, producer }, context) => {
          seen.push(`command ${envelope.command_id} from ${producer}`);
          await context.publisherFor('inventory').publish({
            eventType: 'inventory.result',
            eventId: `${envelope.command_id}:result`,
            payload: encodeResult({
              result_id: `${envelope.command_id}:result`,
              instance_id: envelope.instance_id,
              workflow: envelope.workflow,
              definition_version: envelope.definition_version,
              definition_digest: envelope.definition_digest,
              step: envelope.step,
              action: envelope.action,
              outcome: 'succeeded',
              completed_at: new Date().toISOString(),
            }),
          });
        }),
      },
      orchestrator: {
        stream: results,
        group: 'orchestrator',
        schedule: '* * * * *',
        settings: { runBudgetMs: 5_000, minIdleMs: 10_000 },
        handler: resultConsumer(({ envelope, producer }) => {
          seen.push(`result ${envelope.result_id} ${envelope.outcome} from ${producer}`);
        }, { allowedProducers: { reserve: ['inventory'] } }),
      },
    },
    trim: { schedule: '*/5 * * * *' },
  });
}

describe.each(clientKinds)('deployment runtime over $name', (kind) => {
  let port: RedisPort;
  let admin: Redis;
  beforeEach(() => {
    port = kind.connect();
    admin = adminClient();
  });
  afterEach(async () => {
    await port.close();
    admin.disconnect();
  });

  it('runs a command → result exchange through scheduled polls, then trims', async () => {
    const prefix = uniquePrefix();
    const seen: string[] = [];
    const config = deployment(prefix, seen);
    const runtime = createRuntime(config, { port, env });
    const deadline = () => Date.now() + 4_000;
    // Groups exist before the first publish: the first poll ensures them.
    await runPollJob(runtime, 'inventory', { deadline: deadline() });
    await runPollJob(runtime, 'orchestrator', { deadline: deadline() });

    await runtime.publisherFor('orchestrator').publish({
      eventType: 'inventory.reserve',
      eventId: 'cmd-1',
      payload: encodeCommand({
        command_id: 'cmd-1',
        instance_id: 'order-1',
        workflow: 'order',
        definition_version: 1,
        definition_digest: DIGEST,
        step: 'reserve',
        action: 'execute',
        issued_at: new Date().toISOString(),
        input: { sku: 'A', qty: 1 },
      }),
    });
    const participant = await runPollJob(runtime, 'inventory', { deadline: deadline() });
    const orchestrator = await runPollJob(runtime, 'orchestrator', { deadline: deadline() });
    expect(participant.report.acked).toBe(1);
    expect(orchestrator.report.acked).toBe(1);
    expect(seen).toEqual(['command cmd-1 from orchestrator', 'result cmd-1:result succeeded from inventory']);
    expect(await pendingIds(admin, `${prefix}:{c}:cmd`, 'inventory')).toEqual([]);

    const line = JSON.parse(runLogLine(participant, { deployment: 'shop', emf: true }));
    expect(line).toMatchObject({ job: 'poll', consumer: 'inventory', acked: 1, Deployment: 'shop', Consumer: 'inventory' });
    expect(line._aws.CloudWatchMetrics[0].Namespace).toBe('SagaStreams');
    expect(line).toMatchObject({ level: 'info', markerHits: 0, released: 0, handlerContractErrors: 0 });
    const metricNames = line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name);
    expect(metricNames).toEqual(expect.arrayContaining(['markerHits', 'released', 'handlerContractErrors']));
    const contractError = { ...participant, report: { ...participant.report, handlerContractErrors: 1 } };
    expect(JSON.parse(runLogLine(contractError, { deployment: 'shop' }))).toMatchObject({ level: 'warn', handlerContractErrors: 1 });
    const unconfirmed = { ...participant, report: { ...participant.report, settledUnconfirmed: 1 } };
    expect(JSON.parse(runLogLine(unconfirmed, { deployment: 'shop' }))).toMatchObject({ level: 'warn', settledUnconfirmed: 1 });

    // A second command, so the first is below every group's frontier and can go; trim keeps
    // the frontier entry itself (the last delivered one) and everything after it.
    await runtime.publisherFor('orchestrator').publish({
      eventType: 'inventory.reserve',
      eventId: 'cmd-2',
      payload: encodeCommand({
        command_id: 'cmd-2',
        instance_id: 'order-2',
        workflow: 'order',
        definition_version: 1,
        definition_digest: DIGEST,
        step: 'reserve',
        action: 'execute',
        issued_at: new Date().toISOString(),
        input: {},
      }),
    });
    await runPollJob(runtime, 'inventory', { deadline: deadline() });
    const trim = await runTrimJob(runtime);
    expect(trim.streams.map((s) => [s.name, s.retention.stream.status, s.retention.stream.removed])).toEqual([
      [`${prefix}:{c}:cmd`, 'trimmed', 1],
      [`${prefix}:{r}:results`, 'trimmed', 0],
    ]);
    expect(await admin.xlen(`${prefix}:{c}:cmd`)).toBe(1);
  });

  it('creates the group in the run that finds it missing, even after it was deleted behind a warm process', async () => {
    const prefix = uniquePrefix();
    const runtime = createRuntime(deployment(prefix, []), { port, env });
    const deadline = () => Date.now() + 4_000;
    await runPollJob(runtime, 'inventory', { deadline: deadline() });
    expect(await admin.xinfo('GROUPS', `${prefix}:{c}:cmd`)).toHaveLength(1);
    await admin.xgroup('DESTROY', `${prefix}:{c}:cmd`, 'inventory');
    // The run's claim answers NOGROUP: the run creates the group (SPEC §5.5) and claims again.
    await expect(runPollJob(runtime, 'inventory', { deadline: deadline() })).resolves.toMatchObject({ job: 'poll' });
    expect(await admin.xinfo('GROUPS', `${prefix}:{c}:cmd`)).toHaveLength(1);
  });

  it('refuses a handler that publishes as an identity its consumer does not declare', async () => {
    const prefix = uniquePrefix();
    const cmd = `${prefix}:{c}:cmd`;
    const refusals: Array<string | undefined> = [];
    const config = defineConfig({
      name: 'shop',
      redis: { tcp: {} },
      streams: { [cmd]: { auth: { mode: 'hmac', keyId: 'orch-1', keyEnv: 'CMD_KEY', producer: 'orchestrator' } } },
      routes: { 'inventory.reserve': cmd },
      consumers: {
        inventory: {
          stream: cmd,
          group: 'inventory',
          schedule: '* * * * *',
          settings: { runBudgetMs: 5_000, minIdleMs: 10_000 },
          handler: entryConsumer((_, context) => {
            try {
              context.publisherFor('orchestrator'); // holds the key in this env, but is not declared
            } catch (error) {
              refusals.push(errorCode(error));
              throw error;
            }
          }),
        },
      },
    });
    const runtime = createRuntime(config, { port, env });
    await runPollJob(runtime, 'inventory', { deadline: Date.now() + 4_000 });
    await runtime.publisherFor('orchestrator').publish({ eventType: 'inventory.reserve', eventId: 'c-1', payload: '{}' });
    const { report } = await runPollJob(runtime, 'inventory', { deadline: Date.now() + 4_000 });
    expect(refusals).toEqual(['CONFIG_INVALID']);
    expect(report).toMatchObject({ retained: 1, acked: 0 });
  });

  it('logs a failed wake-up, even one throwing a value nothing can inspect, and the publish still succeeds', async () => {
    const prefix = uniquePrefix();
    const lines: string[] = [];
    const revoked = Proxy.revocable(new Error('x'), {});
    revoked.revoke();
    const failures = [new Error('queue down'), revoked.proxy];
    const runtime = createRuntime(deployment(prefix, []), {
      port,
      env,
      log: (line) => lines.push(line),
      wakeUp: async () => {
        throw failures.shift();
      },
    });
    const publisher = runtime.publisherFor('orchestrator');
    await publisher.publish({ eventType: 'inventory.reserve', eventId: 'c-1', payload: '{}' });
    await publisher.publish({ eventType: 'inventory.reserve', eventId: 'c-2', payload: '{}' });
    expect(await admin.xlen(`${prefix}:{c}:cmd`)).toBe(2);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'wake-up not sent', job: 'publish', error: { name: 'Error', message: 'queue down' } }),
      expect.objectContaining({ level: 'warn', msg: 'wake-up not sent', job: 'publish', error: { name: 'uninspectable' } }),
    ]);
    expect(lines.map(logLineProblems)).toEqual([[], []]);
  });

  it('refuses a poll job with too little time left before sending any command', async () => {
    const metered = meterPort(port);
    const runtime = createRuntime(deployment(uniquePrefix(), []), { port: metered, env });
    await expect(runPollJob(runtime, 'inventory', { deadline: Date.now() + 100 })).rejects.toMatchObject({ code: 'RUN_DEADLINE_TOO_CLOSE' });
    expect(metered.roundTrips).toBe(0);
  });

  it('fails naming only the missing variables of the consumer it builds', () => {
    const runtime = createRuntime(deployment(uniquePrefix(), []), { port, env: { CMD_KEY: env.CMD_KEY } });
    expect(() => runtime.poller('inventory')).toThrow(/RESULT_KEY: environment variable is not set/);
    expect(() => runtime.poller('orchestrator')).toThrow(/RESULT_KEY/);
    try {
      runtime.poller('inventory');
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('00112233');
    }
  });
});
