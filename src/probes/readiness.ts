/**
 * Readiness probe (SPEC §8): Redis answers PING, every config is valid, every group exists
 * (ensured idempotently — which also surfaces missing ACL rights before real traffic).
 * Failures are values, not exceptions: a probe reports every problem it finds.
 */
import { assertSingleSlot } from '../entry/assert-single-slot';
import { parseConsumerConfig, type ConsumerConfig, type ConsumerConfigInput } from '../consume/config';
import { errorCode } from '../ground/errors';
import { ensureGroup } from '../consume/groups';
import { command, type RedisPort } from '../redis/port';
import { runCommand } from '../redis/script';

export interface ReadinessCheck {
  /** `ping`, `config`, `group`, or the name of an extra check. */
  readonly check: string;
  /** What was checked: e.g. `consumers[0]`, `orders/g`. */
  readonly subject: string;
  readonly ok: boolean;
  /** The failure's stable error code, when it has one. */
  readonly code?: string;
  /** Why it failed (error messages of this library never carry secrets). */
  readonly message?: string;
}

export interface Readiness {
  readonly ready: boolean;
  readonly checks: readonly ReadinessCheck[];
}

/** Another component's check (e.g. publisher config): throw to fail it. */
export interface ExtraCheck {
  readonly name: string;
  readonly subject: string;
  run(): unknown;
}

export interface ReadinessOptions {
  readonly port: RedisPort;
  /** Raw consumer configs, validated here; parsed ones are accepted and only have their groups ensured. */
  readonly consumers: ReadonlyArray<ConsumerConfigInput | ConsumerConfig>;
  readonly extra?: readonly ExtraCheck[];
}

async function attempt(check: string, subject: string, work: () => unknown): Promise<ReadinessCheck> {
  try {
    await work();
    return { check, subject, ok: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : 'check failed';
    const code = errorCode(error);
    return code === undefined ? { check, subject, ok: false, message } : { check, subject, ok: false, code, message };
  }
}

export async function checkReadiness(options: ReadinessOptions): Promise<Readiness> {
  const checks: ReadinessCheck[] = [await attempt('ping', 'redis', () => runCommand(options.port, command('PING')))];
  const parsed: ConsumerConfig[] = [];
  for (const [index, input] of options.consumers.entries()) {
    checks.push(
      await attempt('config', `consumers[${index}]`, () => {
        const config = parseConsumerConfig(input);
        // The same rule createPoller applies, so /readyz never says ready for a config that
        // cannot run on this Cluster.
        if (options.port.cluster) assertSingleSlot(config.keys);
        parsed.push(config);
      }),
    );
  }
  const groups = await Promise.all(
    parsed.map((c) => attempt('group', `${c.keys.stream}/${c.group}`, () => ensureGroup(options.port, c.keys.stream, c.group, c.startFrom))),
  );
  checks.push(...groups);
  for (const extra of options.extra ?? []) checks.push(await attempt(extra.name, extra.subject, () => extra.run()));
  return { ready: checks.every((c) => c.ok), checks };
}
