/**
 * The flow key on the wire (SPEC §5.7; docs/design/flow-control.md §1, slice 0): a publisher
 * writes `flow_key` after the signed fields and before `key_id`/`sig`, outside the signature;
 * the consumer's signed processor still admits the entry and the handler reads the key as
 * exactly the text published. Publish dedupe ignores it (the first append's key stands), and a
 * scheduled event carries it into the stream when it moves. Keys no consumer could compare
 * byte for byte are refused before anything is sent, naming the field.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { createPoller } from '../../src/consume/poller';
import { textPayload } from '../../src/consume/processor';
import { checkEvent, MAX_FLOW_KEY_BYTES } from '../../src/publish/entry-fields';
import { PublishError } from '../../src/publish/errors';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { moveDueEvents } from '../../src/schedule/move';
import { sizeKeys } from '../../src/entry/size-keys';
import { clientKinds } from '../support/clients';
import { fastConfig, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';

const KEY = 'flow-key-publish-signing-key-001';
// ignoreBOM: a leading U+FEFF is part of the stored value, as the consumer reads it.
const text = new TextDecoder('utf-8', { ignoreBOM: true });

/** Field names and values of every entry of the stream, in order, as text. */
async function storedFields(admin: Redis, stream: string): Promise<string[][]> {
  return (await admin.xrangeBuffer(stream, '-', '+')).map(([, flat]) => flat.map((part) => text.decode(part)));
}

/** The stream's flow key records (lib/record-size.lua): '<entry id> <key>' each, in id order. */
async function keyRecords(admin: Redis, stream: string): Promise<string[]> {
  return (await admin.zrangebylex(sizeKeys(stream).large, '[k', '+')).map((member) => member.split(' ').slice(1).join(' '));
}

function refusal(flowKey: unknown): PublishError | undefined {
  try {
    checkEvent({ eventType: 'order.placed', eventId: 'e1', payload: '{}', flowKey: flowKey as string }, 'tcp');
    return undefined;
  } catch (error) {
    if (error instanceof PublishError) return error;
    throw error;
  }
}

describe('flow keys a publisher accepts', () => {
  it.each([
    ['an empty key', ''],
    ['a key past the byte limit', 'é'.repeat(MAX_FLOW_KEY_BYTES / 2 + 1)],
    ['a lone surrogate', 'order-\ud800'],
    ['a number', 42],
  ])('refuses %s as PUBLISH_EVENT_INVALID naming flow_key', (_, flowKey) => {
    expect(refusal(flowKey)).toMatchObject({ code: 'PUBLISH_EVENT_INVALID', field: 'flow_key', transient: false });
  });

  it.each([
    ['one byte', 'a'],
    ['exactly the byte limit', 'é'.repeat(MAX_FLOW_KEY_BYTES / 2)],
    ['a leading byte-order mark, kept as published', '\ufefforder-1'],
    ['spaces and any script', 'tenant 7 / Zürich ✓'],
  ])('accepts %s', (_, flowKey) => {
    expect(refusal(flowKey)).toBeUndefined();
  });
});

describe.each(clientKinds)('the flow key field over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'flow');

  const publisherOf = () => createPublisher({ port, routes: { 'order.placed': stream }, auth: { mode: 'hmac', keyId: 'k1', key: KEY } });

  it('is written after the signed fields, outside the signature, and reaches the handler exactly', async () => {
    const publisher = publisherOf();
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const keyed = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: '{"n":1}', traceparent: tp, flowKey: '\ufeffZürich-7' });
    await publisher.publish({ eventType: 'order.placed', eventId: 'e2', payload: '{"n":2}' });
    // The writer records the key beside the entry (a claim with flow leases admits from it); e2 has none.
    expect(await keyRecords(admin, stream)).toEqual([`${keyed.entryId} \ufeffZürich-7`]);
    // One count per append, by kind: an unkeyed append costs no more than before key records.
    expect(await admin.hgetall(sizeKeys(stream).counts)).toEqual({ plain: '1', keyed: '1' });

    const [first, second] = await storedFields(admin, stream);
    expect(first!.filter((_, i) => i % 2 === 0)).toEqual(['event', 'event_id', 'payload', 'traceparent', 'flow_key', 'key_id', 'sig']);
    expect(first![9]).toBe('\ufeffZürich-7');
    expect(second!.filter((_, i) => i % 2 === 0)).toEqual(['event', 'event_id', 'payload', 'key_id', 'sig']);

    const seen: Array<[string, string | undefined]> = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { startFrom: '0-0' }),
      process: createSignedProcessor({
        stream,
        auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'shop' },
        decode: textPayload,
        handler: ({ eventId, flowKey }) => {
          seen.push([eventId, flowKey]);
        },
      }),
    });
    await poller.ensureGroup();
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 })).toMatchObject({ acked: 2, authRejected: 0, deadLettered: 0 });
    expect(seen).toEqual([
      ['e1', '\ufeffZürich-7'],
      ['e2', undefined],
    ]);
  });

  it('is not part of the publish digest: a repeat with another key is a duplicate, and the first key stands', async () => {
    const publisher = publisherOf();
    const first = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: '{}', flowKey: 'order-1' });
    const again = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: '{}', flowKey: 'order-2' });
    expect(again).toMatchObject({ duplicate: true, entryId: first.entryId });
    const stored = await storedFields(admin, stream);
    expect(stored).toHaveLength(1);
    expect(stored[0]![stored[0]!.indexOf('flow_key') + 1]).toBe('order-1');
  });

  it('travels with a scheduled event into the stream', async () => {
    const publisher = publisherOf();
    await publisher.publish({ eventType: 'order.placed', eventId: 'later', payload: '{}', flowKey: 'order-9' }, { delayMs: 200 });
    expect(await admin.exists(stream)).toBe(0);
    await sleepMs(250);
    expect(await moveDueEvents(port, stream)).toMatchObject({ moved: 1 });
    const [moved] = await storedFields(admin, stream);
    const [movedId] = (await admin.xrange(stream, '-', '+')).map(([id]) => id);
    expect(await keyRecords(admin, stream)).toEqual([`${movedId} order-9`]);
    expect(moved!.filter((_, i) => i % 2 === 0)).toEqual(['event', 'event_id', 'payload', 'flow_key', 'key_id', 'sig']);
    expect(moved![7]).toBe('order-9');
  });

  it('refuses a bad key before anything is written', async () => {
    await expect(publisherOf().publish({ eventType: 'order.placed', eventId: 'e1', payload: '{}', flowKey: '' })).rejects.toMatchObject({
      code: 'PUBLISH_EVENT_INVALID',
      field: 'flow_key',
    });
    expect(await admin.exists(stream)).toBe(0);
  });
});
