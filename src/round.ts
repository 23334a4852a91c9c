/**
 * One round (SPEC §5.1): claim → decide → settle, in exactly two Redis round trips
 * whatever the batch size (one when there was nothing to settle). Any Redis failure
 * rejects the round: whatever was not settled stays in the PEL, never reported as
 * "no messages".
 */
import { claimEntries, type ClaimResult } from './claim';
import type { ConsumerConfig } from './config';
import { decideAll, type EntryProcessor } from './decide';
import type { StreamEntry } from './entry';
import { meterPort } from './redis/metered';
import type { RedisPort } from './redis/port';
import type { RoundReport } from './report';
import { settleDecisions } from './settle';

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
  await settleDecisions(port, config, decided.decisions);

  let acked = 0;
  let deadLettered = 0;
  let authRejected = 0;
  for (const { verdict } of decided.decisions) {
    if (verdict.kind === 'ack') acked += 1;
    if (verdict.kind === 'dead-letter') {
      deadLettered += 1;
      if (verdict.auth) authRejected += 1;
    }
  }
  const report: RoundReport = {
    acked,
    deadLettered,
    retained: decided.decisions.length - acked - deadLettered,
    reclaimed: claim.reclaimed,
    deletedPending: claim.deletedIds.length,
    authRejected,
    handled: decided.handled,
    handlerMicrosSum: decided.handlerMicrosSum,
    roundTrips: port.roundTrips,
    durationMs: now() - startedAt,
    stoppedForDeadline: decided.stoppedForDeadline,
  };
  return { report, claim };
}
