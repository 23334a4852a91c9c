/**
 * Group ensure (SPEC §5.5): idempotent creation with MKSTREAM. An existing group is never
 * reset — BUSYGROUP means someone created it first, which is success.
 */
import { RedisCommandError } from '../ground/errors';
import { command, type RedisPort } from '../redis/port';
import { runCommand } from '../redis/script';

export type EnsureGroupResult = 'created' | 'exists';

export async function ensureGroup(
  port: RedisPort,
  stream: string,
  group: string,
  startFrom: '0-0' | '$',
): Promise<EnsureGroupResult> {
  try {
    await runCommand(port, command('XGROUP', 'CREATE', stream, group, startFrom, 'MKSTREAM'));
    return 'created';
  } catch (error) {
    if (error instanceof RedisCommandError && error.replyCode === 'BUSYGROUP') return 'exists';
    throw error;
  }
}
