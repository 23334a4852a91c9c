/**
 * The lease values lib/flow-lease.lua writes by hand (flow_pack_state, flow_pack_ids) are the
 * bytes cmsgpack.pack writes for the same state, in Redis's own Lua: every reader decodes them
 * with cmsgpack (and src/ground/msgpack.ts), and the settle's fast path compares them byte for
 * byte. Each shape at a boundary of the hand-written encoding is checked: ids and tokens around
 * the fixstr/str8 limit, 0 to 13 ids (and the fallback past them), waiting counts around the
 * fixint limit, lease ends below and past 2^32 and fractional ones, kept times, two holders;
 * and the values a real claim writes (claim.lua admits a free key's first entry without a
 * state table) read back through cmsgpack as the holder they name and pack to the same bytes.
 */
import type { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureGroup } from '../../src/consume/groups';
import { parseConsumerConfig } from '../../src/consume/config';
import type { RedisPort } from '../../src/redis/port';
import { expandIncludes } from '../../scripts/build-lua.mjs';
import { ioredisKind } from '../support/clients';
import { claimOnce, fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append } from '../support/redis';

const readLua = (path: string) => readFileSync(fileURLToPath(new URL(`../../lua/${path}`, import.meta.url)), 'utf8');
const fragment = expandIncludes(readLua('lib/flow-lease.lua'), readLua, 'lib/flow-lease.lua');

/**
 * ARGV: token, lease end (a number), waiting, tat, hold, now, then the ids of the holder; a
 * second holder when ARGV[7] is '2' (token 'other', ids after it). Returns { by hand, cmsgpack,
 * the ids packed by hand, the ids packed by cmsgpack }.
 */
const probe = `${fragment}
local holder = { ARGV[1], tonumber(ARGV[2]) }
for i = 8, #ARGV do holder[#holder + 1] = ARGV[i] end
local holders = { holder }
if ARGV[7] == '2' then holders[2] = { 'other', tonumber(ARGV[2]) + 1, '1-1' } end
local state = { holders = holders, waiting = tonumber(ARGV[3]), tat = tonumber(ARGV[4]), hold = tonumber(ARGV[5]), now = tonumber(ARGV[6]) }
local timed = state.tat > state.now or state.hold > state.now
local expected = cmsgpack.pack(timed and { state.holders, state.waiting, state.tat, state.hold } or { state.holders, state.waiting })
local ids_by_hand, ids_by_cmsgpack = '', ''
if #ARGV >= 8 then
  ids_by_hand = flow_pack_ids(ARGV, 8, #ARGV)
  ids_by_cmsgpack = cmsgpack.pack(unpack(ARGV, 8, #ARGV))
end
return { flow_pack_state(state, timed), expected, ids_by_hand, ids_by_cmsgpack }
`;

interface Shape {
  readonly token?: string;
  readonly leaseEnd?: string;
  readonly waiting?: number;
  readonly tat?: number;
  readonly hold?: number;
  readonly holders?: 1 | 2;
  readonly ids: readonly string[];
}

const idOf = (length: number) => `${'1'.repeat(Math.max(1, length - 2))}-7`.slice(-length);
const REDIS_MS = '1796453840013';
const NOW = 1_796_453_840_000;

describe('hand-packed flow lease values', () => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  useRedisPerTest(ioredisKind, (h) => ({ admin, port, stream } = h));

  const pack = async (shape: Shape): Promise<Buffer[]> =>
    (await admin.callBuffer(
      'EVAL',
      probe,
      0,
      shape.token ?? 'run-7f3a',
      shape.leaseEnd ?? REDIS_MS,
      String(shape.waiting ?? 0),
      String(shape.tat ?? 0),
      String(shape.hold ?? 0),
      String(NOW),
      String(shape.holders ?? 1),
      ...shape.ids,
    )) as Buffer[];

  const shapes: Array<[string, Shape]> = [
    ['no ids', { ids: [] }],
    ['one short id', { ids: ['0-1'] }],
    ['ids of 31 and 32 bytes (fixstr and str8)', { ids: [idOf(31), idOf(32)] }],
    ['the longest id (41 bytes)', { ids: ['18446744073709551615-18446744073709551615'] }],
    ['13 ids (the largest fixarray holder)', { ids: Array.from({ length: 13 }, (_, i) => `${REDIS_MS}-${i}`) }],
    ['14 ids (cmsgpack writes it)', { ids: Array.from({ length: 14 }, (_, i) => `${REDIS_MS}-${i}`) }],
    ['127 waiting', { waiting: 127, ids: ['5-0'] }],
    ['128 waiting (cmsgpack writes it)', { waiting: 128, ids: ['5-0'] }],
    ['a lease end below 2^32', { leaseEnd: '4000', ids: ['5-0'] }],
    ['a fractional lease end', { leaseEnd: '1796453840013.5', ids: ['5-0'] }],
    ['a 31-byte token', { token: 't'.repeat(31), ids: ['5-0'] }],
    ['a 32-byte token', { token: 't'.repeat(32), ids: ['5-0'] }],
    ['a 300-byte token', { token: 't'.repeat(300), ids: ['5-0'] }],
    ['a kept rate time (cmsgpack writes it)', { tat: NOW + 50, ids: ['5-0'] }],
    ['a kept hold (cmsgpack writes it)', { hold: NOW + 50, ids: ['5-0'] }],
    ['two holders (cmsgpack writes it)', { holders: 2, ids: ['5-0'] }],
  ];

  it.each(shapes)('%s: the same bytes as cmsgpack', async (_name, shape) => {
    const [byHand, byCmsgpack, idsByHand, idsByCmsgpack] = await pack(shape);
    expect(byHand!.toString('hex')).toBe(byCmsgpack!.toString('hex'));
    expect(idsByHand!.toString('hex')).toBe(idsByCmsgpack!.toString('hex'));
  });

  it('a run holding one key under one id writes [[ [token, lease end, id] ], 0]', async () => {
    const [byHand] = await pack({ ids: ['5-0'] });
    // fixarray 2, fixarray 1, fixarray 3, fixstr token, uint64 lease end, fixstr id, fixint 0
    const expected = Buffer.concat([
      Buffer.from([0x92, 0x91, 0x93, 0xa8]),
      Buffer.from('run-7f3a'),
      Buffer.from([0xcf, 0, 0, 0x01, 0xa2, 0x44, 0xfe, 0x34, 0x8d]),
      Buffer.from([0xa3]),
      Buffer.from('5-0'),
      Buffer.from([0x00]),
    ]);
    expect(byHand!.toString('hex')).toBe(expected.toString('hex'));
  });

  it('a claim writes each key it leases as cmsgpack would: one entry without a state table, two through it', async () => {
    await ensureGroup(port, stream, 'g', '0-0');
    const ids = [];
    for (const key of ['alone', 'twice', 'twice']) ids.push(await append(admin, stream, { event_id: `e-${ids.length}`, payload: 'p', flow_key: key }));
    const config = parseConsumerConfig(fastConfig(stream, { consumer: 'c', batch: 10, flow: { limit: 1 } }));
    const claim = await claimOnce(port, config, { fresh: 10, reclaim: 0, flow: { token: 'run-7f3a', leaseMs: 60_000, limit: 1, strict: false } });
    expect(claim.entries.map((entry) => entry.id)).toEqual(ids);
    // The holder each value names, and whether unpacking and packing it again gives its bytes back.
    const readBack = `local v = redis.call('HGET', KEYS[1], ARGV[1])
local state = cmsgpack.unpack(v)
local holder = state[1][1]
return { cmsgpack.pack(state) == v and 1 or 0, #state[1], state[2], holder[1], unpack(holder, 3) }`;
    expect(await admin.eval(readBack, 1, config.keys.flowLease, 'alone')).toEqual([1, 1, 0, 'run-7f3a', ids[0]]);
    expect(await admin.eval(readBack, 1, config.keys.flowLease, 'twice')).toEqual([1, 1, 0, 'run-7f3a', ids[1], ids[2]]);
  });
});
