/**
 * The entry processor the product scenarios run: the product's own signed-entry processor
 * (required fields, origin verification, decode) with a no-op committed handler.
 */
import { createSignedProcessor } from '../../src/auth/signed-processor';
import type { EntryProcessor } from '../../src/decide';
import { nodeHmac } from '../../src/node/crypto';
import { rawPayload } from '../../src/processor';
import { BENCH_KEY, BENCH_KEY_ID } from '../fixtures';

export function benchProcessor(stream: string): EntryProcessor {
  return createSignedProcessor({
    stream,
    auth: { mode: 'hmac', keyId: BENCH_KEY_ID, key: BENCH_KEY, producer: 'bench' },
    decode: rawPayload,
    handler: () => 'committed',
    hmac: nodeHmac,
  });
}
