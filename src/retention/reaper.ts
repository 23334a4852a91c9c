/**
 * Consumer reaper (SPEC §7): delete consumers with zero pending entries that have been
 * idle longer than a threshold. The check and the delete happen inside reap.lua, because
 * XGROUP DELCONSUMER would drop a consumer's pending entries with it.
 */
import { reapScript } from '../generated/lua-scripts';
import type { RedisPort } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import { runScript } from '../redis/script';

export interface ReapOptions {
  /** Only consumers idle strictly longer than this are deleted. */
  readonly idleMs: number;
  /** At most this many deletions per call. */
  readonly maxPerRun: number;
  /** Groups to reap; undefined = every group on the stream. */
  readonly groups?: readonly string[] | undefined;
}

export interface ReapedConsumer {
  readonly group: string;
  readonly consumer: string;
}

export interface ReapResult {
  readonly deleted: readonly ReapedConsumer[];
  /** Consumers past the idle threshold kept because they still hold pending entries. */
  readonly busyIdle: number;
}

export async function reapConsumers(port: RedisPort, stream: string, options: ReapOptions): Promise<ReapResult> {
  const reply = await runScript(port, {
    script: reapScript,
    keys: [stream],
    args: [options.idleMs, options.maxPerRun, ...(options.groups ?? [])],
  });
  const [deletedFlat, busyIdle] = asArray(reply, 'reap reply');
  const flat = asArray(deletedFlat, 'reap deleted');
  const deleted: ReapedConsumer[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    deleted.push({ group: asText(flat[i], 'reaped group'), consumer: asText(flat[i + 1], 'reaped consumer') });
  }
  return { deleted, busyIdle: asInteger(busyIdle, 'reap busy idle') };
}
