/**
 * Upstash's base64 reply encoding, decoded by its exact rule rather than by the look of a
 * string. With the request header `Upstash-Encoding: base64`, Upstash documents: "all
 * strings in the response will be base64 encoded, except for the OK response". So:
 *
 * - a result that is exactly `"OK"` is the status reply OK. No base64 text is `"OK"`
 *   (base64 comes in groups of 4 characters), so this cannot be a bulk string;
 * - every other string, at any depth — bulk strings, other status replies (PONG), strings in
 *   arrays — is base64 of the reply's exact bytes, and anything that is not base64 is a
 *   protocol violation (ReplyShapeError), never text to take as is;
 * - integers are JSON numbers, nil is null, arrays nest.
 *
 * @upstash/redis 1.39 decodes the same way (pkg/http.ts `decode`: `raw === "OK" ? "OK" :
 * base64decode(raw)` for a result, base64decode for the strings of an array) but then reads
 * the bytes as UTF-8, losing non-UTF-8 values; here they stay bytes.
 */
import { isPaddedBase64 } from '../ground/base64';
import { ReplyShapeError } from '../ground/errors';
import type { RedisReply } from './port';

/** The only string shape Upstash sends besides the OK status is padded base64 (isPaddedBase64). */
const OK_STATUS = 'OK';

function base64Bytes(text: string): Uint8Array {
  if (!isPaddedBase64(text)) throw new ReplyShapeError(`upstash reply string that is not base64 (${text.length} characters)`);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function decodeElement(raw: unknown): RedisReply {
  if (raw === null) return null;
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string') return base64Bytes(raw);
  if (Array.isArray(raw)) return raw.map(decodeElement);
  throw new ReplyShapeError(`upstash reply value ${typeof raw === 'number' ? 'that is not an integer' : `of type ${typeof raw}`}`);
}

/** One command's `result` from a base64-encoded reply, as the port's reply type. */
export function decodeRestReply(raw: unknown): RedisReply {
  return raw === OK_STATUS ? new TextEncoder().encode(OK_STATUS) : decodeElement(raw);
}
