/** Small builders shared by the round suites: a fast config and handlers with known behaviour. */
import type { ConsumerConfigInput } from '../../src/config';
import { createProcessor, rawPayload } from '../../src/processor';
import { decodeText } from '../../src/ground/text';
import type { HandlerOutcome } from '../../src/verdict';

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
