/**
 * Binary payloads (SPEC §3.2, §10): the stored entry bytes are what is signed. Over TCP a
 * non-UTF-8 payload is published, verified and handed to the handler byte-for-byte; over
 * REST, which carries values as JSON strings, the publisher refuses it before sending
 * anything rather than let it arrive altered.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { createPoller } from '../../src/consume/poller';
import { rawPayload } from '../../src/consume/processor';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig } from '../support/poller';
import { pendingIds } from '../support/redis';
import { entriesOf } from './stream-entries';

const KEY = 'binary-payload-signing-key-00001';
const BINARY = Uint8Array.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x1b, 0x80, 0x00, 0x00, 0x00, 0x04]);

describe.each(clientKinds)('binary payloads over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'blobs');

  it('signs and verifies the exact stored bytes, or refuses what REST cannot carry', async () => {
    const publisher = createPublisher({ port, routes: { blob: stream }, auth: { mode: 'hmac', keyId: 'k1', key: KEY } });
    const seen: Array<{ payload: Uint8Array; producer: string }> = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createSignedProcessor({
        stream,
        auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'blob-writer' },
        decode: rawPayload,
        handler: ({ payload, producer }) => {
          seen.push({ payload: Uint8Array.from(payload), producer });
        },
      }),
    });
    await poller.ensureGroup();
    const publishing = publisher.publish({ eventType: 'blob', eventId: 'b1', payload: BINARY });

    if (port.transport === 'rest') {
      await expect(publishing).rejects.toMatchObject({ code: 'PUBLISH_EVENT_INVALID', transient: false });
      expect(await admin.xlen(stream)).toBe(0);
      expect(publisher.duplicateHints).toBe(0);
      return;
    }
    await publishing;
    const [[, stored]] = (await entriesOf(admin, stream)) as [[string, Map<string, Buffer>]];
    expect(Uint8Array.from(stored.get('payload')!)).toEqual(BINARY);
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 })).toMatchObject({ acked: 1, authRejected: 0 });
    expect(seen).toEqual([{ payload: BINARY, producer: 'blob-writer' }]);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('carries a 1 MiB UTF-8 payload signed end to end', async () => {
    const payload = JSON.stringify({ blob: 'a'.repeat(1024 * 1024 - '{"blob":""}'.length) });
    expect(payload.length).toBe(1024 * 1024);
    const publisher = createPublisher({ port, routes: { blob: stream }, auth: { mode: 'hmac', keyId: 'k1', key: KEY } });
    let received = '';
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createSignedProcessor({
        stream,
        auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'blob-writer' },
        decode: (bytes) => new TextDecoder().decode(bytes),
        handler: ({ payload }) => {
          received = payload;
        },
      }),
    });
    await poller.ensureGroup();
    await publisher.publish({ eventType: 'blob', eventId: 'b1', payload });
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 })).toMatchObject({ acked: 1, authRejected: 0 });
    expect(received).toBe(payload);
  });
});
