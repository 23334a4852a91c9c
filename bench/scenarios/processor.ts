/**
 * The entry processor the product scenarios run: the product's own signed-entry processor
 * (required fields, origin verification, decode) with a no-op committed handler, on the
 * native HMAC engine as every Node entry point passes it.
 */
import type { HmacEngine } from '../../src/auth/hmac';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import type { EntryProcessor } from '../../src/consume/decide';
import { nodeHmac, plainNodeHmac } from '../../src/node/crypto';
import { rawPayload } from '../../src/consume/processor';
import { BENCH_KEY, BENCH_KEY_ID } from '../fixtures';

const ENGINES: Record<'fast' | 'plain', HmacEngine> = { fast: nodeHmac, plain: plainNodeHmac };

export function benchProcessor(stream: string, engine: 'fast' | 'plain' = 'fast'): EntryProcessor {
  return createSignedProcessor({
    stream,
    auth: { mode: 'hmac', keyId: BENCH_KEY_ID, key: BENCH_KEY, producer: 'bench' },
    decode: rawPayload,
    handler: () => 'committed',
    hmac: ENGINES[engine],
  });
}
