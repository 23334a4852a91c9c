/**
 * Flow leases as one run sees them (SPEC §5.7; lua/lib/flow-lease.lua holds the rules): the
 * claim admits an entry that names a flow key only under a lease on that key, and the run
 * gives each admitted entry back to the lease in the settle that decides it — or, for an
 * entry never decided (a batch claimed ahead when the run stopped), in its last settle.
 * An entry whose handler may still be running (its time ran out) is not given back: it keeps
 * its key's slot until the lease ends at the run's deadline + overrun, so no later handler of
 * that key starts beside it.
 * Under strict order an entry given back still pending (retained by its handler, or never
 * started: claimed ahead, held, cut by the stop) is named to be queued as its key's head, so
 * no later entry of the key overtakes it (settle.lua).
 */
import { flowKeyOf, type StreamEntry } from '../entry/entry';
import type { RedisArg } from '../redis/port';
import type { FlowLeasePlan } from './claim';
import type { Verdict } from '../verdict/verdict';
import { MsgpackReader, readArrayLength, readNumber, skipValue } from '../ground/msgpack';

/** A decided entry (settle.ts's Decision, which imports this module). */
interface Decided {
  readonly entry: StreamEntry;
  readonly verdict: Verdict;
}

/** Entries going back to their keys' leases, by key, in one settle. */
export interface LeaseReturn {
  readonly token: string;
  readonly limit: number;
  readonly strict: boolean;
  /** A deferral holds its key until its not-before (a per-key rate limit honours retryAfterMs). */
  readonly hold?: boolean;
  /**
   * Per key: the key as sent (its bytes, or a string when every byte is ASCII: the same bytes,
   * and a command of strings only is written by ioredis without converting every argument to a
   * Buffer), the ids leaving the run's holder, and those of them to queue as heads (strict order).
   */
  readonly keys: ReadonlyArray<{ readonly key: Uint8Array | string; readonly ids: readonly string[]; readonly queued: readonly string[] }>;
}

/**
 * The entry's flow key as a run's ordering key: one code unit per byte, so two keys are the
 * same ordering key exactly when they are the same bytes (the lease's rule).
 */
export function flowOrderingKey(entry: StreamEntry): string | undefined {
  const bytes = flowKeyOf(entry);
  return bytes === undefined ? undefined : byteString(bytes);
}

/**
 * flowOrderingKey of each entry of an admitted batch, read off its admission (keyArg's text is
 * byteString's already) rather than from the entry's fields again.
 */
export function admittedOrderingKeys(admitted: AdmittedLeases): Array<string | undefined> {
  return admitted.keys.map((key) => (key === undefined || typeof key === 'string' ? key : byteString(key)));
}

function byteString(bytes: Uint8Array): string {
  // apply, not spread: spreading a typed array walks its iterator (a profile's top flow cost in
  // Node). Chunked only past 4,096 bytes (apply's argument count); a key is shorter by far.
  if (bytes.length <= 4096) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  let text = '';
  for (let at = 0; at < bytes.length; at += 4096) text += String.fromCharCode.apply(null, bytes.subarray(at, at + 4096) as unknown as number[]);
  return text;
}

/** A key as settle.lua gets it: its bytes, or a string when every byte is ASCII (LeaseReturn). */
function keyArg(bytes: Uint8Array): Uint8Array | string {
  return isAscii(bytes) ? byteString(bytes) : bytes;
}

function isAscii(bytes: Uint8Array): boolean {
  // Indexed: for…of walks the typed array's iterator.
  for (let i = 0; i < bytes.length; i += 1) if (bytes[i]! >= 0x80) return false;
  return true;
}

/**
 * settle.lua's flow section (`0`, or the section count, the token, the limit, the order, the
 * hold and the sections) and the ack list to send beside it. Most keys return one acked id:
 * those go in one section, `''` and their count, then the keys alone — their ids lead the ack
 * list in the same order, so each costs one argument. A key whose returned ids are all acked
 * otherwise is sent as the key and -m: its m ids follow in the ack list. Any other key sends
 * its ids and those to queue. No id is sent twice.
 */
export function leaseReturnArgs(leases: LeaseReturn | undefined, ackIds: readonly string[]): { readonly ackIds: readonly string[]; readonly args: RedisArg[] } {
  if (leases === undefined || leases.keys.length === 0) return { ackIds, args: [0] };
  const { keys } = leases;
  const flags: RedisArg[] = [leases.token, leases.limit, leases.strict ? 1 : 0, leases.hold === true ? 1 : 0];
  // The common round: each key returns one acked id, in the ack list's order — the keys alone, the ack list as it is.
  if (keys.length === ackIds.length && keys.every(({ ids, queued }, i) => ids.length === 1 && queued.length === 0 && ids[0] === ackIds[i])) {
    return { ackIds, args: [1, ...flags, ...oneIdSection(keys.map(({ key }) => key))] };
  }
  const unplaced = new Set(ackIds);
  const oneKeys: Array<Uint8Array | string> = [];
  const oneIds: string[] = [];
  const fromAckList: RedisArg[] = [];
  const fromAckListIds: string[] = [];
  const sections: RedisArg[] = [];
  let sectionCount = 0;
  for (const { key, ids, queued } of keys) {
    if (queued.length === 0 && ids.length === 1 && unplaced.delete(ids[0]!)) {
      oneKeys.push(key);
      oneIds.push(ids[0]!);
    } else if (queued.length === 0 && ids.every((id) => unplaced.has(id))) {
      fromAckList.push(key, -ids.length);
      for (const id of ids) {
        fromAckListIds.push(id);
        unplaced.delete(id);
      }
      sectionCount += 1;
    } else {
      sections.push(key, ids.length, ...ids, queued.length, ...queued);
      sectionCount += 1;
    }
  }
  const header: RedisArg[] = [sectionCount + (oneKeys.length > 0 ? 1 : 0), ...flags];
  const oneSection: RedisArg[] = oneKeys.length > 0 ? oneIdSection(oneKeys) : [];
  const args = header.concat(oneSection, fromAckList, sections);
  if (oneIds.length === 0 && fromAckListIds.length === 0) return { ackIds, args };
  const ordered = oneIds.concat(fromAckListIds);
  for (const id of ackIds) if (unplaced.has(id)) ordered.push(id);
  return { ackIds: ordered, args };
}

/**
 * settle.lua's section of one-id keys. Keys that are all text without a newline go in one
 * argument, each ended by one: ioredis's work is per argument (its profile's share of a flow
 * round), Lua cuts the keys as cheaply as it would read them one by one. Else one per key.
 */
function oneIdSection(keys: ReadonlyArray<Uint8Array | string>): RedisArg[] {
  let packed = '';
  for (const key of keys) {
    if (typeof key !== 'string' || key.includes('\n')) return ['', keys.length, ...keys];
    packed += `${key}\n`;
  }
  return ['', 0, keys.length, packed];
}

/** A retained entry whose handler was handed it and cut short: it may still be running. */
function mayStillRun(decision: Decided, handedOver: number | undefined): boolean {
  const { verdict } = decision;
  return handedOver === 1 && verdict.kind === 'retain' && (verdict.cause === 'handler_timeout' || verdict.cause === 'deadline');
}

/**
 * One claim's entries as its script admitted them: per entry, the key its lease is on, as
 * settle.lua gets it (keyArg: converted once, at admission), until the entry's lease is given
 * back — or kept by a handler that may still run, which is never given back either. Kept
 * beside the batch, not in a map of the run's entries: found by position, each admitted entry
 * costs the run nothing more than its slot here.
 */
export interface AdmittedLeases {
  readonly entries: readonly StreamEntry[];
  /** `entries[i]`'s key; undefined once given back or kept, or for an entry that names none. */
  readonly keys: Array<Uint8Array | string | undefined>;
}

/**
 * A run's side of its flow leases: what its claims send, the keys each claim's batch was
 * admitted under (AdmittedLeases, kept with the batch), and what its settles give back.
 */
export class RunLeases {
  readonly #token: string;
  readonly #limit: number;
  readonly #strict: boolean;
  readonly #share: number | undefined;
  readonly #hold: boolean;

  constructor(token: string, limit: number, strict: boolean, share?: number, hold = false) {
    this.#token = token;
    this.#limit = limit;
    this.#strict = strict;
    this.#share = share;
    this.#hold = hold;
  }

  /** What a claim sends: the token and a lease that lasts until `until` (epoch ms, local clock) from `now`. */
  plan(until: number, now: number): FlowLeasePlan {
    return { token: this.#token, leaseMs: Math.max(1, until - now), limit: this.#limit, strict: this.#strict, share: this.#share };
  }

  /** The keyed entries a claim returned, each admitted under its key's lease; undefined when none names a key. */
  admitted(entries: readonly StreamEntry[]): AdmittedLeases | undefined {
    let keys: AdmittedLeases['keys'] | undefined;
    for (let i = 0; i < entries.length; i += 1) {
      const key = flowKeyOf(entries[i]!);
      if (key !== undefined) (keys ??= new Array<Uint8Array | string | undefined>(entries.length).fill(undefined))[i] = keyArg(key);
    }
    return keys === undefined ? undefined : { entries, keys };
  }

  /**
   * The leases a round decided from `admitted`'s batch gives back (see the header for the one
   * kind it keeps). Decisions come in the batch's order; an entry found elsewhere is looked up.
   */
  returnedBy(admitted: AdmittedLeases | undefined, decisions: readonly Decided[], handedOver: Uint8Array): LeaseReturn | undefined {
    if (admitted === undefined) return undefined;
    const returned = new KeyGroups(this.#strict);
    for (let i = 0; i < decisions.length; i += 1) {
      const { entry, verdict } = decisions[i]!;
      const key = taken(admitted, admitted.entries[i] === entry ? i : admitted.entries.indexOf(entry));
      if (key !== undefined && !mayStillRun(decisions[i]!, handedOver[i])) returned.add(key, entry.id, verdict.kind === 'retain');
    }
    return this.#lease(returned);
  }

  /** The leases of entries no round decided (batches claimed ahead, entries a failed claim took), given back. */
  returnedUnseen(batches: ReadonlyArray<AdmittedLeases | undefined>): LeaseReturn | undefined {
    const returned = new KeyGroups(this.#strict);
    for (const admitted of batches) {
      if (admitted === undefined) continue;
      for (let i = 0; i < admitted.entries.length; i += 1) {
        const key = taken(admitted, i);
        if (key !== undefined) returned.add(key, admitted.entries[i]!.id, true);
      }
    }
    return this.#lease(returned);
  }

  #lease(returned: KeyGroups): LeaseReturn | undefined {
    return returned.size === 0 ? undefined : { token: this.#token, limit: this.#limit, strict: this.#strict, hold: this.#hold, keys: returned.groups() };
  }
}

/** The key entry `at` was admitted under, forgotten (undefined: none, or given back or kept already). */
function taken(admitted: AdmittedLeases, at: number): Uint8Array | string | undefined {
  if (at < 0) return undefined;
  const key = admitted.keys[at];
  admitted.keys[at] = undefined;
  return key;
}

const NONE_QUEUED: readonly string[] = Object.freeze([]);

/** Returned ids grouped by key (its bytes: two keys are one exactly when their bytes are), in first-seen order. */
class KeyGroups {
  readonly #strict: boolean;
  readonly #byName = new Map<string, { key: Uint8Array | string; ids: string[]; queued: readonly string[] }>();

  constructor(strict: boolean) {
    this.#strict = strict;
  }

  get size(): number {
    return this.#byName.size;
  }

  /** `queue`: the id is still pending (retained or never started); under strict order it becomes its key's head. */
  add(key: Uint8Array | string, id: string, queue: boolean): void {
    const name = typeof key === 'string' ? key : byteString(key);
    let group = this.#byName.get(name);
    if (group === undefined) this.#byName.set(name, (group = { key, ids: [], queued: NONE_QUEUED }));
    group.ids.push(id);
    if (!queue || !this.#strict) return;
    if (group.queued === NONE_QUEUED) group.queued = [];
    (group.queued as string[]).push(id);
  }

  groups(): LeaseReturn['keys'] {
    return [...this.#byName.values()];
  }
}

/**
 * One member of a group's flow queue (lua/lib/flow-lease.lua flow_member): the key's length in
 * five digits, the key's bytes, '|', the entry id padded to 20 + 1 + 20 digits, the mark ('p'
 * parked, 'h' a head). Undefined for anything else.
 */
export function parseQueueMember(member: Uint8Array): { key: Uint8Array; id: string; mark: 'p' | 'h' } | undefined {
  const text = (from: number, to: number) => String.fromCharCode(...member.subarray(from, to));
  const length = Number(text(0, 5));
  if (!/^\d{5}$/.test(text(0, 5)) || member.length !== 5 + length + 1 + 41 + 1) return undefined;
  const padded = /^(\d{20})-(\d{20})$/.exec(text(6 + length, 6 + length + 41));
  const mark = text(member.length - 1, member.length);
  if (padded === null || member[5 + length] !== 0x7c || (mark !== 'p' && mark !== 'h')) return undefined;
  return { key: member.subarray(5, 5 + length), id: `${BigInt(padded[1]!)}-${BigInt(padded[2]!)}`, mark };
}

/**
 * The rate times of a key's lease state (a lease hash value, lua/lib/flow-lease.lua
 * flow_decode: `{ holders, waiting[, tat, hold] }`): its bucket's theoretical arrival time and
 * a handler's hold, Redis ms — 0 when absent or unreadable, as the scripts read them.
 */
export function leaseTimes(value: Uint8Array): { readonly tat: number; readonly hold: number } {
  const none = { tat: 0, hold: 0 };
  const reader = new MsgpackReader(value);
  const length = readArrayLength(reader);
  if (length === undefined || length < 4 || !skipValue(reader) || !skipValue(reader)) return none;
  const tat = readNumber(reader);
  const hold = readNumber(reader);
  return tat === undefined || hold === undefined ? none : { tat, hold };
}
