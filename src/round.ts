/**
 * One round (SPEC §5.1): claim → decide → settle, in exactly two Redis round trips
 * whatever the batch size (one when there was nothing to settle). Any Redis failure
 * rejects the round: whatever was not settled stays in the PEL, never reported as
 * "no messages".
 */
import { claimEntries, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import { decideAll, type DecideResult, type EntryProcessor } from './decide';
import type { StreamEntry } from './entry';
import { meterPort } from './redis/metered';
import type { RedisPort } from './redis/port';
import type { RoundReport } from './report';
import { settleDecisions, type SettleResult } from './settle';

export interface RoundDeps {
  readonly port: RedisPort;
  readonly config: ConsumerConfig;
  readonly process: EntryProcessor;
  readonly orderingKey?: (entry: StreamEntry) => string | undefined;
  readonly now: () => number;
}

export interface RoundOutcome {
  readonly report: RoundReport;
  readonly claim: ClaimResult;
}

export async function pollRound(deps: RoundDeps, deadline: number): Promise<RoundOutcome> {
  const { config, now } = deps;
  const startedAt = now();
  const port = meterPort(deps.port);
  const claim = await claimEntries(port, config);
  const decided = await decideAll(claim.entries, deps.process, {
    concurrency: config.concurrency,
    orderingKey: deps.orderingKey,
    deadline,
    handlerTimeoutMs: config.handlerTimeoutMs,
    settleReserveMs: config.settleReserveMs,
    now,
  });
  const settled = await settleDecisions(port, config, decided.decisions);
  const report = roundReport(decided, settled, claim, port.roundTrips, now() - startedAt);
  return { report, claim };
}

/**
 * What Redis did, from the settle script's reply: an id XACK no longer found pending is not
 * counted as acked, and a dead-letter replayed over its marker is a marker hit, not a
 * second record. Retained and auth rejections come from the verdicts (Redis sees neither).
 */
export function roundReport(
  decided: DecideResult,
  settled: SettleResult,
  claim: Pick<ClaimResult, 'reclaimed' | 'deletedIds'>,
  roundTrips: number,
  durationMs: number,
): RoundReport {
  let retained = 0;
  let authRejected = 0;
  for (const { verdict } of decided.decisions) {
    if (verdict.kind === 'retain') retained += 1;
    else if (verdict.kind === 'dead-letter' && verdict.auth) authRejected += 1;
  }
  return {
    acked: settled.acked,
    deadLettered: settled.deadLetterRecords,
    markerHits: settled.markerHits,
    retained,
    reclaimed: claim.reclaimed,
    deletedPending: claim.deletedIds.length,
    authRejected,
    handled: decided.handled,
    handlerMicrosSum: decided.handlerMicrosSum,
    roundTrips,
    durationMs,
    stoppedForDeadline: decided.stoppedForDeadline,
  };
}
