/**
 * Test helpers over a plain ioredis admin connection: they read Redis directly, so
 * assertions check what Redis holds rather than what a report claims.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { appendScript } from '../../src/generated/lua-scripts';
import { sizeKeys } from '../../src/entry/size-keys';
import { RedisCommandError } from '../../src/ground/errors';
import type { RedisReply } from '../../src/redis/port';

/** A unique key prefix per test, so tests never collide on a shared server. */
export function uniquePrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

export function adminClient(): Redis {
  return new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
}

export interface PendingRow {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

export async function pendingRows(admin: Redis, stream: string, group: string): Promise<PendingRow[]> {
  const rows = (await admin.xpending(stream, group, '-', '+', 10_000)) as Array<[string, string, number, number]>;
  return rows.map(([id, consumer, idleMs, deliveries]) => ({ id, consumer, idleMs, deliveries }));
}

export async function pendingIds(admin: Redis, stream: string, group: string): Promise<string[]> {
  return (await pendingRows(admin, stream, group)).map((r) => r.id);
}

/** DLT records as field maps (string values). */
export async function dltRecords(admin: Redis, dlt: string): Promise<Array<Record<string, string>>> {
  const entries = await admin.xrange(dlt, '-', '+');
  return entries.map(([, flat]) => {
    const record: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
    return record;
  });
}

/**
 * Appends an entry with the given string fields, as the product's writers do (append.lua:
 * the size is recorded beside it, so consumers read such streams natively); returns its id.
 * `foreignAppend` is a plain XADD, as another writer would do it.
 */
export async function append(admin: Redis, stream: string, fields: Record<string, string | Buffer>): Promise<string> {
  const sizes = sizeKeys(stream);
  const flat = Object.entries(fields).flat();
  return (await admin.eval(appendScript.text, 3, stream, sizes.counts, sizes.large, ...flat)) as string;
}

export async function foreignAppend(admin: Redis, stream: string, fields: Record<string, string | Buffer>): Promise<string> {
  const flat = Object.entries(fields).flat();
  return (await admin.xadd(stream, '*', ...flat)) as string;
}

/**
 * ARGV[n] (1-based, as the script reads it) of an EVALSHA / EVAL command as the port sends it:
 * `[sha or text, numkeys, ...keys, ...args]`. Independent of how many keys the script takes.
 */
export function scriptArg(command: { readonly args: readonly unknown[] }, n: number): unknown {
  return command.args[1 + Number(command.args[1]) + n];
}

/** A port's reply as text (a bulk string's bytes), or the refusal it was: for asserting on exchanges. */
export function replyText(reply: RedisReply | RedisCommandError | undefined): string | RedisCommandError {
  return reply instanceof RedisCommandError ? reply : Buffer.from(reply as Uint8Array).toString();
}
