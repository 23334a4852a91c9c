/** defineConfig: cross-references checked, every problem listed by path, no secret values held. */
import { describe, expect, it } from 'vitest';
import { commandConsumer, resultConsumer } from '../../src/deployment/consumers';
import { defineConfig } from '../../src/deployment/define-config';
import { jobsForCron } from '../../src/deployment/cron-jobs';
import { wakeUpConsumers } from '../../src/deployment/jobs';
import type { DeploymentInput } from '../../src/deployment/schema';
import { toEventBridgeCron } from '../../src/deployment/cron';
import { ConfigError } from '../../src/ground/errors';

const DIGEST = 'a'.repeat(64);
const route = { workflow: 'order', definitionVersion: 1, definitionDigest: DIGEST, step: 'reserve' };

export function exampleInput(overrides: Partial<DeploymentInput> = {}): DeploymentInput {
  return {
    name: 'shop',
    redis: { tcp: {}, rest: {} },
    streams: {
      'shop:{inv}:cmd': { auth: { mode: 'hmac', keyId: 'orch-1', keyEnv: 'INV_CMD_KEY', producer: 'orchestrator' } },
      'shop:{res}:results': {
        auth: {
          mode: 'hmac-keyring',
          keys: {
            'inv-1': { producer: 'inventory', keyEnv: 'INV_RESULT_KEY_OLD', retired: true },
            'inv-2': { producer: 'inventory', keyEnv: 'INV_RESULT_KEY' },
          },
        },
      },
    },
    routes: { 'inventory.reserve': 'shop:{inv}:cmd', 'inventory.result': 'shop:{res}:results' },
    consumers: {
      inventory: {
        stream: 'shop:{inv}:cmd',
        group: 'inventory',
        schedule: '* * * * *',
        wakeUp: true,
        publishesAs: ['inventory'],
        settings: { runBudgetMs: 30_000, minIdleMs: 60_000 },
        handler: commandConsumer(route, () => 'committed'),
      },
      orchestrator: {
        stream: 'shop:{res}:results',
        group: 'orchestrator',
        schedule: '*/5 * * * *',
        publishesAs: ['orchestrator'],
        settings: { runBudgetMs: 30_000, minIdleMs: 60_000 },
        handler: resultConsumer(() => 'committed'),
      },
    },
    publishApi: { producers: { orchestrator: { tokenEnv: 'ORCH_TOKEN', eventTypes: ['inventory.reserve'] } } },
    trim: { schedule: '*/5 * * * *' },
    ...overrides,
  };
}

function problems(input: DeploymentInput): string[] {
  try {
    defineConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a ConfigError');
}

describe('defineConfig', () => {
  it('accepts the example and plans each consumer with a parsed config', () => {
    const config = defineConfig(exampleInput());
    const inventory = config.consumers.get('inventory')!;
    expect(inventory.config).toMatchObject({ stream: 'shop:{inv}:cmd', group: 'inventory', consumer: 'inventory', runBudgetMs: 30_000 });
    expect(inventory.config.keys.dlt).toBe('shop:{inv}:cmd:dlt');
    expect(config.routesFor('inventory')).toEqual([
      { eventType: 'inventory.result', stream: 'shop:{res}:results', signing: { keyId: 'inv-2', keyEnv: 'INV_RESULT_KEY' } },
    ]);
  });

  it('names the secrets each function needs, and only those', () => {
    const config = defineConfig(exampleInput());
    expect(config.secrets.consumer('inventory')).toEqual(['INV_CMD_KEY', 'INV_RESULT_KEY']);
    expect(config.secrets.consumer('orchestrator')).toEqual(['INV_CMD_KEY', 'INV_RESULT_KEY', 'INV_RESULT_KEY_OLD']);
    expect(config.secrets.publishApi).toEqual(['INV_CMD_KEY', 'ORCH_TOKEN']);
    expect(config.secrets.redis).toEqual(['REDIS_URL', 'UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN']);
  });

  it('maps cron expressions to jobs and wake-ups to consumers', () => {
    const config = defineConfig(exampleInput());
    expect(jobsForCron(config, '*/5 * * * *')).toEqual([{ kind: 'poll', consumer: 'orchestrator' }, { kind: 'trim' }]);
    expect(jobsForCron(config, '* * * * *')).toEqual([{ kind: 'poll', consumer: 'inventory' }]);
    expect(wakeUpConsumers(config, 'shop:{inv}:cmd')).toEqual(['inventory']);
    expect(toEventBridgeCron('*/5 * * * *')).toBe('cron(0/5 * * * ? *)');
  });

  it('matches a Cloudflare trigger by the schedule\'s Cloudflare form, not its Unix text', () => {
    const input = exampleInput();
    const config = defineConfig({
      ...input,
      consumers: { ...input.consumers, orchestrator: { ...input.consumers.orchestrator!, schedule: '0 9 * * 1-5' } },
      trim: { schedule: '30 2 * * SUN' },
    });
    expect(jobsForCron(config, '0 9 * * MON-FRI')).toEqual([{ kind: 'poll', consumer: 'orchestrator' }]);
    expect(jobsForCron(config, '30 2 * * SUN')).toEqual([{ kind: 'trim' }]);
    // Cloudflare reads "1-5" as Sunday to Thursday: that trigger must not run the weekday job.
    expect(jobsForCron(config, '0 9 * * 1-5')).toEqual([]);
  });

  it('accepts day and month names and refuses schedules no platform runs the same way, naming the field', () => {
    const input = exampleInput();
    const withSchedule = (schedule: string) => ({
      ...input,
      consumers: { ...input.consumers, orchestrator: { ...input.consumers.orchestrator!, schedule } },
    });
    expect(() => defineConfig(withSchedule('0 9 * JAN-MAR MON-FRI'))).not.toThrow();
    expect(problems(withSchedule('99 99 99 99 99'))).toEqual([expect.stringMatching(/^consumers\.orchestrator\.schedule: must be a 5-field cron schedule: .*minute/)]);
    expect(problems(withSchedule('0 9 1 * 1'))).toEqual([
      expect.stringMatching(/^consumers\.orchestrator\.schedule: must be a 5-field cron schedule: restricts both day-of-month and day-of-week/),
    ]);
    expect(problems({ ...input, trim: { schedule: '0 0 L * *' } })).toEqual([expect.stringMatching(/^trim\.schedule: must be a 5-field cron schedule: /)]);
  });

  it('lists every cross-reference problem by path', () => {
    const input = exampleInput();
    const found = problems({
      ...input,
      routes: { ...input.routes, 'ghost.event': 'shop:{nowhere}' },
      consumers: {
        ...input.consumers,
        idle: { stream: 'shop:{inv}:cmd', group: 'g', handler: commandConsumer(route, () => undefined) },
        broken: {
          stream: 'shop:{inv}:cmd',
          group: 'g2',
          schedule: '* * * * *',
          settings: { runBudgetMs: 60_000, minIdleMs: 60_000 },
          handler: commandConsumer(route, () => undefined),
        },
        blocking: {
          stream: 'shop:{inv}:cmd',
          group: 'g3',
          schedule: '* * * * *',
          settings: { blockMs: 0, stream: 'override' },
          handler: commandConsumer(route, () => undefined),
        },
      },
      publishApi: { producers: { inventory: { tokenEnv: 'INV_TOKEN', eventTypes: ['inventory.reserve', 'nope'] } } },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'routes.ghost.event: stream "shop:{nowhere}" is not declared in streams',
        'consumers.idle: needs a schedule or wakeUp: true, or it never runs',
        expect.stringMatching(/^consumers\.blocking\.settings\.blockMs:/),
        'consumers.blocking.settings.stream: is set on the consumer or its stream, not in settings',
        expect.stringMatching(/^consumers\.broken\.settings\.minIdleMs: must exceed runBudgetMs/),
        expect.stringMatching(/^publishApi\.producers\.inventory\.eventTypes\.0: producer "inventory" cannot sign/),
        'publishApi.producers.inventory.eventTypes.1: event type "nope" has no route',
      ]),
    );
  });

  it("names a consumer's settings that cannot fit by their path in the deployment", () => {
    const input = exampleInput();
    const found = problems({
      ...input,
      consumers: {
        ...input.consumers,
        inventory: { ...input.consumers.inventory!, settings: { batch: 3_600, reclaimBatch: 10_000, handlerTimeoutMs: 1_000, runBudgetMs: 30_000, minIdleMs: 30_200 } },
      },
    });
    expect(found).toEqual([
      expect.stringMatching(/^consumers\.inventory\.settings\.reclaimBatch: reclaimBatch × handlerTimeoutMs must be ≤ 3600000 ms/),
      expect.stringMatching(/^consumers\.inventory\.settings\.minIdleMs: must exceed runBudgetMs by at least 500 ms/),
    ]);
  });

  it('rejects bad cron, env names and a missing handler', () => {
    const input = exampleInput();
    const found = problems({
      ...input,
      trim: { schedule: 'every minute' },
      streams: { ...input.streams, 'x:{y}': { auth: { mode: 'hmac', keyId: 'k', keyEnv: 'lower-case', producer: 'p' } } },
      consumers: { ...input.consumers, nohandler: { stream: 'x:{y}', group: 'g', schedule: '* * * * *' } as never },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^trim\.schedule: must be a 5-field cron/),
        expect.stringMatching(/^streams\.x:\{y\}\.auth\.keyEnv: must be an environment variable name/),
        expect.stringMatching(/^consumers\.nohandler\.handler:/),
      ]),
    );
  });
});
