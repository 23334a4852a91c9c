/** Small builders shared by the round suites: a fast config and handlers with known behaviour. */
import type { ClaimResult, FlowLeasePlan, FreshRead } from '../../src/consume/claim';
import type { ConsumerConfig, ConsumerConfigInput } from '../../src/consume/config';
import { exchange } from '../../src/consume/exchange';
import type { RedisPort } from '../../src/redis/port';
import { createProcessor, rawPayload } from '../../src/consume/processor';
import { decodeText } from '../../src/ground/text';
import type { HandlerOutcome } from '../../src/verdict/verdict';

/** Budgets small enough for tests, and consistent with §5.4 (minIdle > runBudget). */
export function fastConfig(stream: string, overrides: Partial<ConsumerConfigInput> = {}): ConsumerConfigInput {
  return {
    stream,
    group: 'g',
    consumer: 'c1',
    handlerTimeoutMs: 1_000,
    runBudgetMs: 5_000,
    minIdleMs: 10_000,
    settleReserveMs: 50,
    ...overrides,
  };
}

/** A processor over raw payloads whose handler records each payload (as text) it sees. */
export function recordingProcessor(
  seen: string[],
  outcome: (payload: string) => Promise<HandlerOutcome> | HandlerOutcome = () => 'committed',
) {
  return createProcessor(rawPayload, ({ payload }) => {
    const text = decodeText(payload);
    seen.push(text);
    return outcome(text);
  });
}

export const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** decideAll options for a test round: in order, 1 s handler timeout, 10 s to the deadline. */
export const decideOptions = (over: object = {}) => ({
  concurrency: 1,
  deadline: Date.now() + 10_000,
  handlerTimeoutMs: 1_000,
  settleReserveMs: 10,
  now: Date.now,
  ...over,
});

/**
 * One claim on its own (claim.lua, then the native read beside it when `read` is 'native'),
 * with the whole default byte budget unless told: what a run's claim would take.
 */
export async function claimOnce(
  port: RedisPort,
  config: ConsumerConfig,
  plan: { fresh: number; reclaim: number; read?: FreshRead; allowance?: number; alone?: boolean; flow?: FlowLeasePlan },
): Promise<ClaimResult> {
  const outcome = await exchange(port, config, {
    claim: { allowance: config.maxRoundBytes, alone: true, read: 'lua', gate: `test.${Math.random().toString(36).slice(2)}`, ...plan },
  });
  if (outcome.claim === undefined) throw outcome.claimError;
  return outcome.claim;
}
