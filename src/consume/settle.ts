/**
 * The settle round trip (SPEC §5.1 step 3): every verdict of a round applied by one
 * settle.lua call. Retained entries stay in the PEL; those a handler deferred with a delay
 * (SPEC §5.6) get a not-before time there, so the claim leaves them until then.
 */
import type { ConsumerConfig } from './config';
import { Fields, fieldText, type StreamEntry } from '../entry/entry';
import { settleScript } from '../generated/lua-scripts';
import { markerKeyFor } from '../entry/marker-key';
import { flowQueueKey, flowReadyKey } from '../entry/keys';
import type { RedisArg, RedisPort, RedisReply } from '../redis/port';
import { asArray, asInteger } from '../redis/reply';
import { runScript, type ScriptCall } from '../redis/script';
import { isValidRetryAfter, type Verdict } from '../verdict/verdict';
import { leaseReturnArgs, type LeaseReturn } from './flow-lease';

export interface Decision {
  readonly entry: StreamEntry;
  readonly verdict: Verdict;
}

export interface SettleResult {
  readonly acked: number;
  readonly deadLetterRecords: number;
  /** Dead-letters found already recorded (replay after a partial failure): acked only. */
  readonly markerHits: number;
  /**
   * Of the entries above, those whose durability wait (config `durability`) fell short: the
   * settle happened, that it survives losing the primary is not confirmed.
   */
  readonly unconfirmed: number;
  /** Deferral not-before times written (retained entries whose handler asked for a delay). */
  readonly deferred?: number;
  /** Flow keys whose lease this run had lost when it returned them (SPEC §5.7): the key had moved on. */
  readonly leaseLost?: number;
  /** Flow keys this settle made ready: it freed a slot while entries waited (the next claim serves them first). */
  readonly readyKeys?: number;
}

export const NOTHING_SETTLED: SettleResult = { acked: 0, deadLetterRecords: 0, markerHits: 0, unconfirmed: 0 };

/** A retained verdict's deferral delay, when it carries a usable one. */
function deferralDelay(verdict: Verdict): number | undefined {
  return verdict.kind === 'retain' && isValidRetryAfter(verdict.retryAfterMs) ? verdict.retryAfterMs : undefined;
}

export function needsSettling(decisions: readonly Decision[]): boolean {
  return decisions.some((d) => d.verdict.kind !== 'retain' || deferralDelay(d.verdict) !== undefined);
}

export async function settleDecisions(
  port: RedisPort,
  config: ConsumerConfig,
  decisions: readonly Decision[],
): Promise<SettleResult> {
  const call = settleCall(config, decisions);
  return call === undefined ? NOTHING_SETTLED : settleResultOf(await runScript(port, call));
}

// ---- Split for pipelining (run loop, H3): the call and its reply decoding, so a run can send
// the settle in the same round trip as its next claim or its release.

/**
 * The settle.lua call for these decisions and flow leases, or undefined when every verdict is
 * `retain` and no lease is returned.
 */
export function settleCall(config: ConsumerConfig, decisions: readonly Decision[], leases?: LeaseReturn): ScriptCall | undefined {
  if (!needsSettling(decisions) && leases === undefined) return undefined;
  const ackIds: string[] = [];
  const markers: string[] = [];
  const deadLetterArgs: RedisArg[] = [];
  const deferralArgs: RedisArg[] = [];
  for (const { entry, verdict } of decisions) {
    if (verdict.kind === 'ack') ackIds.push(entry.id);
    if (verdict.kind === 'retain') {
      const delay = deferralDelay(verdict);
      if (delay !== undefined) deferralArgs.push(entry.id, delay);
    }
    if (verdict.kind !== 'dead-letter') continue;
    markers.push(markerKeyFor(config.keys, config.group, entry.id));
    deadLetterArgs.push(entry.id, fieldText(entry, Fields.eventId) ?? '', verdict.reason, entry.deliveries);
  }
  const flow = leaseReturnArgs(leases, ackIds);
  return {
    script: settleScript,
    keys: [config.keys.stream, config.keys.dlt, config.keys.defer, config.keys.flowLease, flowReadyKey(config.keys.flowLease), flowQueueKey(config.keys.flowLease), ...markers],
    args: [config.group, config.markerTtlSeconds, flow.ackIds.length, ...flow.ackIds, deferralArgs.length / 2, ...deferralArgs, ...flow.args, ...deadLetterArgs],
  };
}

export function settleResultOf(reply: RedisReply | undefined): SettleResult {
  if (reply === undefined) return NOTHING_SETTLED;
  const [acked, records, hits, deferred, leaseLost, ready] = asArray(reply, 'settle reply');
  return {
    acked: asInteger(acked, 'settle acked'),
    deadLetterRecords: asInteger(records, 'settle records'),
    markerHits: asInteger(hits, 'settle marker hits'),
    unconfirmed: 0,
    deferred: asInteger(deferred, 'settle deferred'),
    leaseLost: asInteger(leaseLost, 'settle lease lost'),
    readyKeys: asInteger(ready, 'settle ready keys'),
  };
}

/** The same settle, its durability not confirmed: everything it settled counts as unconfirmed. */
export function unconfirmedSettle(settled: SettleResult): SettleResult {
  return { ...settled, unconfirmed: settled.acked + settled.deadLetterRecords + settled.markerHits };
}
