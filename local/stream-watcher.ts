/**
 * Wake-ups for the local stack: a bounded XREAD BLOCK per consumed stream, on its own
 * connection (a blocking read would stall every other command sharing one), reports each
 * append at once — including the commands and results handlers publish, which no HTTP
 * wake-up covers. The watcher reads without a group, so it consumes nothing.
 */
import { command, type RedisPort } from '../src/redis/port';
import { asArray, asText } from '../src/redis/reply';
import { runCommand } from '../src/redis/script';
import { sleep } from '../src/consume/wait';

/** Longest a watcher blocks: also the longest stop waits for it. */
export const WATCH_BLOCK_MS = 500;
const RETRY_MS = 1_000;

export interface StreamWatcherOptions {
  readonly streams: readonly string[];
  /** A new connection per call (each watcher owns one). */
  readonly connect: () => RedisPort;
  readonly onAppend: (stream: string) => void;
  readonly onError: (stream: string, error: unknown) => void;
  readonly signal: AbortSignal;
}

/** Newest entry id of `stream`, or 0-0 when empty: a fixed starting point, so nothing appended between reads is missed. */
async function newestId(port: RedisPort, stream: string): Promise<string> {
  const [newest] = asArray(await runCommand(port, command('XREVRANGE', stream, '+', '-', 'COUNT', 1)), 'XREVRANGE reply');
  return newest === undefined ? '0-0' : asText(asArray(newest, 'XREVRANGE entry')[0], 'entry id');
}

async function watch(stream: string, options: StreamWatcherOptions): Promise<void> {
  const port = options.connect();
  try {
    let lastId: string | undefined;
    while (!options.signal.aborted) {
      try {
        lastId ??= await newestId(port, stream);
        const reply = await runCommand(port, command('XREAD', 'COUNT', 100, 'BLOCK', WATCH_BLOCK_MS, 'STREAMS', stream, lastId));
        if (reply === null) continue;
        const entries = asArray(asArray(asArray(reply, 'XREAD reply')[0], 'XREAD stream')[1], 'XREAD entries');
        const last = entries[entries.length - 1];
        if (last !== undefined) lastId = asText(asArray(last, 'XREAD entry')[0], 'entry id');
        options.onAppend(stream);
      } catch (error) {
        if (options.signal.aborted) break;
        options.onError(stream, error);
        await sleep(RETRY_MS, options.signal);
      }
    }
  } finally {
    await port.close();
  }
}

/** Starts one watcher per stream; the promise settles once all have stopped (after `signal` aborts). */
export function watchStreams(options: StreamWatcherOptions): Promise<void> {
  return Promise.all(options.streams.map((stream) => watch(stream, options))).then(() => undefined);
}
