/** Decoding helpers for RedisReply values; a shape mismatch is a ReplyShapeError. */
import { ReplyShapeError } from '../ground/errors';
import { decodeText } from '../ground/text';
import type { RedisReply } from './port';

export function isBytes(reply: RedisReply | undefined): reply is Uint8Array {
  return reply instanceof Uint8Array;
}

export function asText(reply: RedisReply | undefined, what: string): string {
  if (!isBytes(reply)) throw new ReplyShapeError(`${what}: expected a string`);
  return decodeText(reply);
}

export function asArray(reply: RedisReply | undefined, what: string): RedisReply[] {
  if (!Array.isArray(reply)) throw new ReplyShapeError(`${what}: expected an array`);
  return reply;
}

export function asInteger(reply: RedisReply | undefined, what: string): number {
  if (typeof reply === 'number') return reply;
  if (isBytes(reply)) {
    const parsed = Number(decodeText(reply));
    if (Number.isInteger(parsed)) return parsed;
  }
  throw new ReplyShapeError(`${what}: expected an integer`);
}
