/** The entry processor the product scenarios run: verify the signature, then a no-op commit. */
import { SecretKey } from '../../src/auth/secret';
import { verifyEntry } from '../../src/auth/signature';
import type { EntryProcessor } from '../../src/decide';
import { Fields } from '../../src/entry';
import { decodeText } from '../../src/redis/reply';
import { Verdicts } from '../../src/verdict';
import { BENCH_KEY } from '../fixtures';

export function benchProcessor(stream: string, key: SecretKey = BENCH_KEY): EntryProcessor {
  return async (entry) => {
    const f = entry.fields;
    const ok = await verifyEntry(
      key,
      { stream, eventId: f.get(Fields.eventId)!, eventType: f.get(Fields.event)!, payload: f.get(Fields.payload)! },
      decodeText(f.get(Fields.sig)!),
    );
    return ok ? Verdicts.ack() : Verdicts.deadLetter('signature_invalid', { auth: true });
  };
}
