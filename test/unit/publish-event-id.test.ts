/**
 * A publisher refuses exactly the event ids a consumer would dead-letter `event_id_invalid`
 * (SPEC §3.4, §5.4): the publisher judges the id as text, the consumer judges its stored
 * UTF-8 bytes, and both must draw the same line — a BOM, any character outside printable
 * ASCII, or more than 256 of them is refused before anything is sent, naming the field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidEventIdBytes } from '../../src/entry/keys';
import { checkEvent } from '../../src/publish/entry-fields';
import { PublishError } from '../../src/publish/errors';

/** The PublishError checkEvent throws for this event id, or undefined when it accepts it. */
function refusal(eventId: string): PublishError | undefined {
  try {
    checkEvent({ eventType: 'order.placed', eventId, payload: 'x' }, 'tcp');
    return undefined;
  } catch (error) {
    if (error instanceof PublishError) return error;
    throw error;
  }
}

describe('the event ids a publisher accepts', () => {
  it('are exactly those whose UTF-8 bytes a consumer admits', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0x00, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 300 });
    const eventId = fc.oneof(
      ascii,
      ascii.map((id) => `\ufeff${id}`),
      fc.constantFrom(255, 256, 257).map((n) => 'a'.repeat(n)),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.string({ unit: fc.constantFrom('a', '\ufeff', '\ufffd', '\ud800', '\udcff', 'é', ' '), maxLength: 8 }),
    );
    fc.assert(
      fc.property(eventId, (id) => {
        expect(refusal(id) === undefined).toBe(isValidEventIdBytes(new TextEncoder().encode(id)));
      }),
      { numRuns: 2000 },
    );
  });

  it.each(['\ufeffdup-1', 'dup-\ufffd', 'é', 'a'.repeat(257), 'dup 1', ''])('refuses %j as PUBLISH_EVENT_INVALID naming event_id', (id) => {
    expect(refusal(id)).toMatchObject({ code: 'PUBLISH_EVENT_INVALID', field: 'event_id', transient: false });
  });
});
