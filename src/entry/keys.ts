/**
 * Key names (SPEC §3.4). Every key of a stream derives from the stream name, so under
 * Redis Cluster it shares the stream's hash slot and one script can touch them all.
 */
import { markerKeyFor } from './marker-key';
import { sizeKeys } from './size-keys';

/** The length bound of NAME_PATTERN. */
const MAX_NAME_CHARS = 256;
const NAME_PATTERN = /^[\x21-\x7e]{1,256}$/;

/** Printable ASCII, no spaces, 1..=256 bytes. */
export function isValidKeyName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

export interface StreamKeys {
  readonly stream: string;
  readonly dlt: string;
  /** Dead-letter markers are `<markerPrefix><group>:<source_entry_id>` (see markerKeyFor). */
  readonly markerPrefix: string;
  readonly cursor: string;
  /** Publish-dedupe records are `<publishDedupePrefix><event_id>`. */
  readonly publishDedupePrefix: string;
  /** Hash of one group's deferral not-before times (SPEC §5.6): entry id → Redis ms. */
  readonly defer: string;
  /** Hash of one group's flow leases (SPEC §5.7, lua/lib/flow-lease.lua): flow key → holders and waiting entries. */
  readonly flowLease: string;
}

export interface StreamKeyOverrides {
  readonly dlt?: string;
  readonly markerPrefix?: string;
  readonly cursor?: string;
  readonly publishDedupePrefix?: string;
  readonly defer?: string;
  readonly flowLease?: string;
}

export function deriveStreamKeys(stream: string, group: string, overrides: StreamKeyOverrides = {}): StreamKeys {
  return {
    stream,
    dlt: overrides.dlt ?? `${stream}:dlt`,
    markerPrefix: overrides.markerPrefix ?? `${stream}:dlt:marker:`,
    cursor: overrides.cursor ?? `${stream}:cursor:${group}`,
    publishDedupePrefix: overrides.publishDedupePrefix ?? `${stream}:pub:`,
    defer: overrides.defer ?? `${stream}:defer:${group}`,
    flowLease: overrides.flowLease ?? `${stream}:flow:lease:${group}`,
  };
}

/**
 * A group's ready flow keys (a slot is free while entries wait): a sorted set scored by
 * arrival, served first ready, first served by the next claims; named after the lease hash, so
 * it shares its hash slot.
 */
export function flowReadyKey(flowLease: string): string {
  return `${flowLease}:ready`;
}

/**
 * A group's rate-limit state (SPEC §5.7: its theoretical arrival time, GCRA), named after the
 * lease hash, so it shares its hash slot (and is no longer than the ready key checked for it).
 */
export function flowRateKey(flowLease: string): string {
  return `${flowLease}:rate`;
}

/**
 * The sorted set of a group's per-key flow queues (entries parked behind their key, and under
 * strict order its heads), named after the lease hash, so it shares its hash slot.
 */
export function flowQueueKey(flowLease: string): string {
  return `${flowLease}:queue`;
}

/** The longest stream entry id: both parts at their 64-bit maximum (41 bytes). */
export const LONGEST_ENTRY_ID = '18446744073709551615-18446744073709551615';

const MAX_KEY_BYTES = 256;
const PRINTABLE = /^[\x21-\x7e]+$/;
const byteLength = (text: string) => new TextEncoder().encode(text).length;

export interface DerivedKeyProblem {
  /** The config field that caused it (`stream`, `group`, `keys.markerPrefix`). */
  readonly path: string;
  readonly message: string;
}

function tooLongProblem(path: string, what: string, key: string): DerivedKeyProblem {
  return { path, message: `makes the ${what} ${byteLength(key)} bytes long; key names are at most ${MAX_KEY_BYTES} bytes` };
}

/** The DLT name derived from the stream (none when overridden) must fit the key-name rule. */
export function derivedDltProblems(stream: string, overrides: Pick<StreamKeyOverrides, 'dlt'> = {}): DerivedKeyProblem[] {
  if (overrides.dlt !== undefined) return [];
  const dlt = deriveStreamKeys(stream, '').dlt;
  return byteLength(dlt) > MAX_KEY_BYTES ? [tooLongProblem('stream', 'derived DLT name (<stream>:dlt)', dlt)] : [];
}

/** A claim's gate key is `<gatePrefix><nonce>`; nonces (claim.ts) stay within this many bytes. */
const LONGEST_GATE_NONCE = 24;

/** The keys writers and claims share to keep the byte budget a bound (size-keys.ts) must fit the key-name rule. */
export function sizeKeyProblems(stream: string): DerivedKeyProblem[] {
  const keys = sizeKeys(stream);
  const longest = [keys.counts, keys.large, keys.gatePrefix + 'x'.repeat(LONGEST_GATE_NONCE)].reduce((a, b) => (byteLength(a) >= byteLength(b) ? a : b));
  return byteLength(longest) > MAX_KEY_BYTES ? [tooLongProblem('stream', 'longest derived size or gate key (<stream>:gate:<nonce>)', longest)] : [];
}

/**
 * Derived key names follow the same rule as explicit ones (SPEC §3.4): printable ASCII,
 * no spaces, 1..=256 bytes. The stream and each override are checked as names on their own;
 * this checks what is built from them — the DLT `<stream>:dlt`, the cursor
 * `<stream>:cursor:<group>`, the deferral hash `<stream>:defer:<group>` and every marker `<markerPrefix><group>:<entry id>` up to the
 * longest entry id. The group is part of every marker key, so it must be key-safe even
 * with an explicit cursor. A key too long is blamed on the group when a shorter group would
 * fix it, otherwise on the field its prefix comes from. Values are never echoed.
 */
export function derivedKeyProblems(stream: string, group: string, overrides: StreamKeyOverrides = {}): DerivedKeyProblem[] {
  const keys = deriveStreamKeys(stream, group, overrides);
  const problems: DerivedKeyProblem[] = [];
  if (group.length > 0 && !PRINTABLE.test(group)) {
    problems.push({ path: 'group', message: 'must be printable ASCII without spaces: it is part of every dead-letter marker key (and of the derived cursor key)' });
  }
  const tooLong = (path: string, what: string, key: string) => problems.push(tooLongProblem(path, what, key));
  /** A per-group key too long: blame the group when a shorter one would do, else where the prefix comes from. */
  const perGroup = (what: string, key: string, withoutGroup: string, prefixSource: string) => {
    if (byteLength(key) > MAX_KEY_BYTES) tooLong(byteLength(withoutGroup) < MAX_KEY_BYTES ? 'group' : prefixSource, what, key);
  };
  problems.push(...derivedDltProblems(stream, overrides), ...sizeKeyProblems(stream));
  if (overrides.cursor === undefined) perGroup('derived cursor key (<stream>:cursor:<group>)', keys.cursor, `${stream}:cursor:`, 'stream');
  if (overrides.defer === undefined) perGroup('derived deferral key (<stream>:defer:<group>)', keys.defer, `${stream}:defer:`, 'stream');
  for (const [suffix, derived] of [['ready', flowReadyKey], ['queue', flowQueueKey]] as const) {
    if (overrides.flowLease === undefined) {
      perGroup(`derived flow ${suffix} key (<stream>:flow:lease:<group>:${suffix})`, derived(keys.flowLease), derived(`${stream}:flow:lease:`), 'stream');
    } else if (byteLength(derived(keys.flowLease)) > MAX_KEY_BYTES) {
      tooLong('keys.flowLease', `flow ${suffix} key (<keys.flowLease>:${suffix})`, derived(keys.flowLease));
    }
  }
  perGroup(
    'longest marker key (<markerPrefix><group>:<entry id>)',
    markerKeyFor(keys, group, LONGEST_ENTRY_ID),
    `${keys.markerPrefix}:${LONGEST_ENTRY_ID}`,
    overrides.markerPrefix === undefined ? 'stream' : 'keys.markerPrefix',
  );
  return problems;
}

/** Event ids become key suffixes (markers, dedupe records): same rule as key names. */
export function isValidEventId(eventId: string): boolean {
  return NAME_PATTERN.test(eventId);
}

/**
 * isValidEventId for stored event_id bytes, judged on the bytes themselves (SPEC §3.4
 * "Exact bytes"): 1..=256 bytes, each printable ASCII. Nothing is decoded — a decoder that
 * drops a leading BOM made `\uFEFFdup-1` pass as `dup-1`, a duplicate of another event.
 */
export function isValidEventIdBytes(bytes: Uint8Array): boolean {
  if (bytes.length < 1 || bytes.length > MAX_NAME_CHARS) return false;
  for (let i = 0; i < bytes.length; i += 1) if (bytes[i]! < 0x21 || bytes[i]! > 0x7e) return false;
  return true;
}
