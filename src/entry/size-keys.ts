/**
 * The keys a stream's writers and claims share to keep the byte budget a bound (SPEC §5.1):
 * the count of entries appended by writers that record sizes, the record of every entry
 * larger than claim.lua's SMALL, and the prefix of the one-claim gate keys a native read
 * goes through. Derived from the stream name, so under Redis Cluster they share its slot.
 */
export interface SizeKeys {
  /** Hash; field `appended`: entries appended by recording writers (append.lua, publish.lua, redrive.lua). */
  readonly counts: string;
  /** Sorted set of the entries larger than SMALL bytes, with their sizes. */
  readonly large: string;
  /** `<gatePrefix><nonce>`: the gate of one native claim, created and deleted inside its transaction. */
  readonly gatePrefix: string;
}

export function sizeKeys(stream: string): SizeKeys {
  return { counts: `${stream}:sizes`, large: `${stream}:sizes:large`, gatePrefix: `${stream}:gate:` };
}
