/**
 * Waiting for new entries between empty rounds in continuous mode. Over TCP a bounded
 * XREAD BLOCK (no group, so it consumes nothing) wakes us as soon as an entry newer than
 * the last one we saw is appended; REST clients cannot block and sleep instead.
 */
import { command, type RedisPort } from './redis/port';
import { asArray, asText } from './redis/reply';
import { runCommand } from './redis/script';

/**
 * `$` until this run has seen an entry; afterwards the newest id seen, which closes the
 * race where an entry lands between our read and the start of the wait. After a wake-up
 * whose claim found nothing (other consumers took the entries), the run jumps it to the
 * stream's newest id: otherwise it would wake once per entry another consumer reads
 * (about 2 round trips each).
 */
export interface WakeState {
  lastSeenId: string;
}

/** Waits at most waitMs; true when it woke for an entry newer than state.lastSeenId. */
export async function waitForEntries(
  port: RedisPort,
  stream: string,
  state: WakeState,
  waitMs: number,
  signal?: AbortSignal,
  strategy: 'block' | 'sleep' = port.transport === 'tcp' ? 'block' : 'sleep',
): Promise<boolean> {
  if (waitMs <= 0) return false;
  if (strategy === 'sleep' || port.transport !== 'tcp') {
    await sleep(waitMs, signal);
    return false;
  }
  const reply = await runCommand(
    port,
    command('XREAD', 'COUNT', 1, 'BLOCK', Math.ceil(waitMs), 'STREAMS', stream, state.lastSeenId),
  );
  if (reply === null) return false;
  const [perStream] = asArray(reply, 'XREAD reply');
  const [first] = asArray(asArray(perStream, 'XREAD stream')[1], 'XREAD entries');
  if (first === undefined) return false;
  state.lastSeenId = asText(asArray(first, 'XREAD entry')[0], 'XREAD entry id');
  return true;
}

/** After a claim: the newest id this run need not wake for any more. */
export function noteClaimed(state: WakeState, newestFreshId: string | undefined, streamLastId: string | undefined): void {
  if (newestFreshId !== undefined) state.lastSeenId = maxEntryId(state.lastSeenId, newestFreshId);
  // The fresh read found nothing although the stream holds entries up to streamLastId:
  // all of them went to other consumers.
  else if (streamLastId !== undefined) state.lastSeenId = maxEntryId(state.lastSeenId, streamLastId);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Larger of two stream ids, numerically. */
export function maxEntryId(a: string, b: string): string {
  if (a === '$') return b;
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am > bm || (am === bm && as >= bs) ? a : b;
}
