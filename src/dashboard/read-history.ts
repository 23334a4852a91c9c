/**
 * Reading back what the runs recorded (history.ts): each consumer's age samples and run
 * records in one round trip per consumer (its keys share a Cluster slot), and the deployment's
 * trim and relay runs. Records that do not parse are skipped, never fatal: a page must not
 * fail over one odd list element.
 */
import type { ConsumerPlan } from '../deployment/define-config';
import { command, type RedisPort, type RedisReply } from '../redis/port';
import { asArray, asText } from '../redis/reply';
import { runOperations } from '../redis/script';
import { historyKeys, jobRunsKey, type RunRecord } from '../deployment/run-history';

export interface Sample {
  readonly t: number;
  /** Oldest pending age, ms; undefined when nothing was pending. */
  readonly ageMs: number | undefined;
  readonly pending: number;
  readonly deadLetters: number;
  /** Entries acked in the sample's bucket. */
  readonly acked: number;
}

export interface ConsumerHistory {
  /** Oldest first. */
  readonly samples: readonly Sample[];
  /** Newest first. */
  readonly runs: readonly RunRecord[];
  readonly idleRuns: readonly RunRecord[];
}

export function parseSample(text: string): Sample | undefined {
  const match = /^(\d+) (-?\d+) (\d+) (\d+) (\d+)$/.exec(text);
  if (!match) return undefined;
  const age = Number(match[2]);
  return { t: Number(match[1]), ageMs: age < 0 ? undefined : age, pending: Number(match[3]), deadLetters: Number(match[4]), acked: Number(match[5]) };
}

function parseRun(text: string): RunRecord | undefined {
  try {
    const run = JSON.parse(text) as RunRecord;
    return typeof run === 'object' && run !== null && typeof run.t === 'number' && typeof run.job === 'string' ? run : undefined;
  } catch {
    return undefined;
  }
}

const texts = (reply: RedisReply | undefined) => asArray(reply, 'LRANGE reply').map((item) => asText(item, 'list element'));
const defined = <T>(items: ReadonlyArray<T | undefined>): T[] => items.filter((item): item is T => item !== undefined);

/**
 * When the consumer's poller last recorded a run: the newest sample or record. Runs that did
 * something are always recorded, idle ones at most once per `idleRecordSeconds` per process
 * (deployment/run-history.ts), so a live poller is never last seen longer ago than that
 * interval plus its schedule's period.
 */
export function lastRunAt(history: ConsumerHistory): number | undefined {
  const times = [history.samples.at(-1)?.t, history.runs[0]?.t, history.idleRuns[0]?.t].filter((t): t is number => t !== undefined);
  return times.length === 0 ? undefined : Math.max(...times);
}

export async function readConsumerHistory(port: RedisPort, plan: ConsumerPlan): Promise<ConsumerHistory> {
  const keys = historyKeys(plan.config.stream, plan.config.group);
  const [samples, runs, idleRuns] = await runOperations(port, [
    command('LRANGE', keys.samples, 0, -1),
    command('LRANGE', keys.runs, 0, -1),
    command('LRANGE', keys.idleRuns, 0, -1),
  ]);
  return {
    samples: defined(texts(samples).map(parseSample)).reverse(),
    runs: defined(texts(runs).map(parseRun)),
    idleRuns: defined(texts(idleRuns).map(parseRun)),
  };
}

export async function readJobRuns(port: RedisPort, deployment: string): Promise<RunRecord[]> {
  const [runs] = await runOperations(port, [command('LRANGE', jobRunsKey(deployment), 0, -1)]);
  return defined(texts(runs).map(parseRun));
}
