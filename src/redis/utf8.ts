/**
 * What the REST transport can carry byte-for-byte.
 *
 * Upstash REST sends every command as a JSON array of strings, and the server stores a
 * string's UTF-8 encoding. Well-formed UTF-8 therefore survives exactly (a leading BOM and
 * NUL bytes included); any other byte sequence has no JSON string that stands for it. Reads
 * are exact either way (the REST port decodes base64 replies to bytes itself), so the only
 * limit is on writing: a publisher on REST must refuse non-UTF-8 values instead of letting
 * them turn into U+FFFD on the way in.
 *
 * The same strictness applies on the way out for payloads read as text (JSON, text): a
 * payload that is not UTF-8 is refused, never handed to a handler with U+FFFD in it.
 */
import { SagaStreamsError } from '../ground/errors';
import { isWellFormedUtf8 } from '../ground/text';
import type { Transport } from './port';

/** A field value REST cannot write exactly. Stable `code`; names the field, never its bytes. */
export class RestPayloadNotUtf8Error extends SagaStreamsError {
  /** The offending field (or `argument N of COMMAND` when raised by the port). */
  readonly field: string;

  constructor(field: string) {
    super(
      'REST_PAYLOAD_NOT_UTF8',
      `${field} is not valid UTF-8: the REST transport (Upstash) can only carry UTF-8 text byte-for-byte; ` +
        'publish binary payloads over TCP (ioredis) or encode them (e.g. base64) first',
    );
    this.field = field;
  }
}

export type FieldValue = string | Uint8Array;

/**
 * Throws RestPayloadNotUtf8Error for the first field value REST cannot write exactly;
 * does nothing on TCP, which carries any bytes. Call it before appending, so nothing is
 * written when a value is refused.
 *
 * @example
 * assertFieldsFitTransport(port.transport, [['payload', bytes], ['event', 'order.placed']]);
 */
export function assertFieldsFitTransport(
  transport: Transport,
  fields: Iterable<readonly [name: string, value: FieldValue]>,
): void {
  if (transport !== 'rest') return;
  for (const [name, value] of fields) {
    if (typeof value !== 'string' && !isWellFormedUtf8(value)) throw new RestPayloadNotUtf8Error(`field "${name}"`);
  }
}
