/**
 * The proof behind a native read (claim.lua, issue 24 item 1) holds only while the writers'
 * records describe the stream: an unread entry deleted (XDEL) or trimmed by another hand, a
 * group's read counter set past the stream, a lost record set, or a user that may not run
 * XINFO must make the claim read through Lua (measured and cut) or refuse — never deliver past
 * its allowance, and never ack an entry no handler saw. Checked on what Redis sends back.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RedisProcess } from '../../local/redis-server';
import { parseConsumerConfig, type ConsumerConfig } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { sizeKeys } from '../../src/entry/size-keys';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { inject } from 'vitest';
import { ioredisKind } from '../support/clients';
import { claimOnce, fastConfig } from '../support/poller';
import { usePrivateRedis, useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

const MiB = 1024 * 1024;
const ALLOWANCE = 16 * 1024;

function bytesOf(entries: ReadonlyArray<{ id: string; fields: ReadonlyMap<string, Uint8Array> }>): number {
  let bytes = 0;
  for (const entry of entries) {
    bytes += entry.id.length;
    for (const [name, value] of entry.fields) bytes += name.length + value.byteLength;
  }
  return bytes;
}

describe('the native read proof (ioredis)', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let config: ConsumerConfig;

  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    config = parseConsumerConfig(fastConfig(stream));
    // Ten small entries, then one of 3 MiB, all appended by the product's writer.
    for (let i = 0; i < 10; i += 1) await append(admin, stream, { event_id: `s${i}`, payload: `s${i}` });
    await append(admin, stream, { event_id: 'big', payload: 'x'.repeat(3 * MiB) });
    // One read through claim.lua first, as a run's first claim does.
    await claimOnce(port, config, { fresh: 1, reclaim: 0, allowance: ALLOWANCE, alone: false });
  });

  const nativeClaim = (fresh = 20) => claimOnce(port, config, { fresh, reclaim: 0, allowance: ALLOWANCE, alone: false, read: 'native' });

  it('stops at the large entry: the records show it among the next entries, so the read goes through claim.lua and is cut', async () => {
    const claim = await nativeClaim();
    expect(claim.entries.map((e) => e.id.length > 0)).toHaveLength(9);
    expect(bytesOf(claim.entries)).toBeLessThanOrEqual(ALLOWANCE);
    expect(claim.cut).toBe(true);
  });

  it.each([
    ['an unread entry deleted (XDEL), then read past', async () => {
      await admin.xdel(stream, (await admin.xrange(stream, '-', '+'))[1]![0]);
      // Past the deleted entry Redis 7.0 counts one entry-read too few from then on.
      await claimOnce(port, config, { fresh: 1, reclaim: 0, allowance: ALLOWANCE, alone: false });
    }],
    ['unread entries trimmed by another hand (XTRIM MAXLEN)', async () => void (await admin.xtrim(stream, 'MAXLEN', 8))],
    ['the group read counter set past the stream (ENTRIESREAD)', async () => {
      const info = (await admin.xinfo('GROUPS', stream)) as unknown as unknown[][];
      await admin.xgroup('SETID', stream, 'g', String(info[0]![7]), 'ENTRIESREAD', 1000);
    }],
    ['the large-entry records lost', async () => void (await admin.del(sizeKeys(stream).large))],
  ])('never delivers past the allowance after %s', async (_, tamper) => {
    await tamper();
    // Eight fresh entries: with the old ordinal proof, a window that ended just before the large
    // entry's ordinal while the read itself reached the large entry.
    const claim = await nativeClaim(8);
    // The old proof delivered 3,146,204 bytes against 16 KiB after an XDEL.
    expect(bytesOf(claim.entries)).toBeLessThanOrEqual(ALLOWANCE);
    expect(claim.bytes).toBeGreaterThanOrEqual(0);
    expect(claim.entries.some((e) => e.fields.get('event_id') !== undefined && new TextDecoder().decode(e.fields.get('event_id')!) === 'big')).toBe(false);
  });

  it('refuses a claim a user may not run XINFO for, acking nothing it did not hand over', async () => {
    const user = `u${Date.now()}`;
    await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', '-xinfo');
    const limited = connectIoredis(inject('redisUrl').replace('redis://', `redis://${user}:pw@`));
    try {
      await expect(claimOnce(limited, config, { fresh: 20, reclaim: 0, allowance: 1_500, alone: false })).rejects.toThrow(
        // Redis 7.0: "… can't run this command …" / NOPERM; Valkey 8: "ERR ACL failure in script: … has no permissions to run the 'xinfo|groups' command".
        /can't run this command|NOPERM|no permissions to run/i,
      );
      // Nothing was read or acked: one entry pending (the first claim's), nine small ones and the large one still unread.
      expect(await pendingRows(admin, stream, 'g')).toHaveLength(1);
      const [info] = (await admin.xinfo('GROUPS', stream)) as unknown as unknown[][];
      expect(info![11]).toBe(10);
    } finally {
      await limited.close();
      await admin.call('ACL', 'DELUSER', user);
    }
  });
});

describe('a group created at 0-0 behind a backlog (ioredis)', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));

  const groupInfo = async () => {
    const [flat] = (await admin.xinfo('GROUPS', stream)) as unknown[][];
    const info = new Map<string, unknown>();
    for (let i = 0; i + 1 < flat!.length; i += 2) info.set(String(flat![i]), flat![i + 1]);
    return { entriesRead: info.get('entries-read'), lag: info.get('lag') };
  };

  it('leaves the group countable after a read through claim.lua is cut, so the next claims may read natively', async () => {
    for (let i = 0; i < 12; i += 1) await append(admin, stream, { event_id: `b${i}`, payload: 'x'.repeat(4 * 1024) });
    await ensureGroup(port, stream, 'g', '0-0');
    // Redis cannot count what a group created at 0-0 has read until it reads.
    expect((await groupInfo()).entriesRead).toBeNull();
    const config = parseConsumerConfig(fastConfig(stream));
    const claim = await claimOnce(port, config, { fresh: 12, reclaim: 0, allowance: ALLOWANCE, alone: false });
    expect(claim.cut).toBe(true);
    expect(claim.entries.length).toBeGreaterThan(0);
    expect(claim.entries.length).toBeLessThan(12);
    // Known after the cut, and exact: what was handed over, the rest still lagging.
    expect(await groupInfo()).toEqual({ entriesRead: claim.entries.length, lag: 12 - claim.entries.length });
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(claim.entries.length);
  });
});

// On a private redis-server: INFO commandstats counts every client's calls, and the suite's
// shared server serves other test files at the same time.
describe('a proven read through claim.lua (ioredis)', () => {
  let server: RedisProcess;
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let tests = 0;
  usePrivateRedis((h) => ({ server, admin } = h));
  beforeEach(() => {
    stream = `proven:${(tests += 1)}`;
    port = connectIoredis(server.url);
  });
  afterEach(async () => {
    await port.close();
  });

  /** Calls of one command Redis ran since the last CONFIG RESETSTAT, scripts' calls included. */
  const calls = async (command: string): Promise<number> => {
    const line = (await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith(`cmdstat_${command}:`));
    return line === undefined ? 0 : Number(/calls=(\d+)/.exec(line)![1]);
  };

  const appendSmall = async (count: number, payload = 'p') => {
    for (let i = 0; i < count; i += 1) await append(admin, stream, { event_id: `e${i}`, payload: `${payload}${i}` });
  };

  it('reads every entry the proof covers in one XREADGROUP, and counts what they measure', async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    await appendSmall(30);
    const config = parseConsumerConfig(fastConfig(stream));
    // A group created at 0-0 has no read count until it reads (a run's first claim).
    await claimOnce(port, config, { fresh: 1, reclaim: 0, allowance: ALLOWANCE, alone: false });
    await admin.config('RESETSTAT');
    // 20 small entries weigh at most 20 × 1 KiB by the proof: within 32 KiB.
    const claim = await claimOnce(port, config, { fresh: 20, reclaim: 0, allowance: 32 * 1024, alone: false, read: 'lua' });
    expect(claim.entries.map((e) => new TextDecoder().decode(e.fields.get('event_id')))).toEqual(Array.from({ length: 20 }, (_, i) => `e${i + 1}`));
    expect(claim.cut).toBe(false);
    // Stepped (1 entry, then the rest) before: two reads for one claim.
    expect(await calls('xreadgroup')).toBe(1);
    expect(claim.bytes).toBe(bytesOf(claim.entries));
  });

  it('still reads in steps, and cuts at the allowance, when the proof does not hold', async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    await appendSmall(30, 'x'.repeat(900));
    await admin.xtrim(stream, 'MAXLEN', 28); // another hand: the records no longer describe the stream
    const config = parseConsumerConfig(fastConfig(stream));
    await admin.config('RESETSTAT');
    const claim = await claimOnce(port, config, { fresh: 28, reclaim: 0, allowance: 8 * 1024, alone: false, read: 'lua' });
    expect(await calls('xreadgroup')).toBeGreaterThan(1);
    expect(claim.cut).toBe(true);
    expect(bytesOf(claim.entries)).toBeLessThanOrEqual(8 * 1024);
    expect(await pendingRows(admin, stream, 'g')).toHaveLength(claim.entries.length);
  });
});
