/**
 * Flow leases as one run sees them (SPEC §5.7; lua/lib/flow-lease.lua holds the rules): the
 * claim admits an entry that names a flow key only under a lease on that key, and the run
 * gives each admitted entry back to the lease in the settle that decides it — or, for an
 * entry never decided (a batch claimed ahead when the run stopped), in its last settle.
 * An entry whose handler may still be running (its time ran out) is not given back: it keeps
 * its key's slot until the lease ends at the run's deadline + overrun, so no later handler of
 * that key starts beside it.
 */
import { Fields, type StreamEntry } from '../entry/entry';
import type { RedisArg } from '../redis/port';
import type { FlowLeasePlan } from './claim';
import type { Verdict } from '../verdict/verdict';

/** A decided entry (settle.ts's Decision, which imports this module). */
interface Decided {
  readonly entry: StreamEntry;
  readonly verdict: Verdict;
}

/** Entries going back to their keys' leases, by key, in one settle. */
export interface LeaseReturn {
  readonly token: string;
  readonly limit: number;
  readonly keys: ReadonlyArray<{ readonly key: Uint8Array; readonly ids: readonly string[] }>;
}

/** The entry's flow key, its bytes as the claim script read them (the last `flow_key` field); undefined when none. */
export function flowKeyOf(entry: StreamEntry): Uint8Array | undefined {
  const bytes = entry.fields.get(Fields.flowKey);
  return bytes === undefined || bytes.length === 0 ? undefined : bytes;
}

/**
 * The entry's flow key as a run's ordering key: one code unit per byte, so two keys are the
 * same ordering key exactly when they are the same bytes (the lease's rule).
 */
export function flowOrderingKey(entry: StreamEntry): string | undefined {
  const bytes = flowKeyOf(entry);
  return bytes === undefined ? undefined : byteString(bytes);
}

function byteString(bytes: Uint8Array): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += 4096) text += String.fromCharCode(...bytes.subarray(at, at + 4096));
  return text;
}

/** settle.lua's flow section: `0`, or the count, the token, the limit and each key with its ids. */
export function leaseReturnArgs(leases: LeaseReturn | undefined): RedisArg[] {
  if (leases === undefined || leases.keys.length === 0) return [0];
  const args: RedisArg[] = [leases.keys.length, leases.token, leases.limit];
  for (const { key, ids } of leases.keys) args.push(key, ids.length, ...ids);
  return args;
}

/** A retained entry whose handler was handed it and cut short: it may still be running. */
function mayStillRun(decision: Decided, handedOver: number | undefined): boolean {
  const { verdict } = decision;
  return handedOver === 1 && verdict.kind === 'retain' && (verdict.cause === 'handler_timeout' || verdict.cause === 'deadline');
}

/** The leases one run holds: what its claims admitted under a key and it has not given back. */
export class RunLeases {
  readonly #token: string;
  readonly #limit: number;
  /** Admitted entry id → its key. */
  readonly #admitted = new Map<string, Uint8Array>();

  constructor(token: string, limit: number) {
    this.#token = token;
    this.#limit = limit;
  }

  /** What a claim sends: the token and a lease that lasts until `until` (epoch ms, local clock) from `now`. */
  plan(until: number, now: number): FlowLeasePlan {
    return { token: this.#token, leaseMs: Math.max(1, until - now), limit: this.#limit };
  }

  /** Records the keyed entries a claim returned: each was admitted under its key's lease. */
  admitted(entries: readonly StreamEntry[]): void {
    for (const entry of entries) {
      const key = flowKeyOf(entry);
      if (key !== undefined) this.#admitted.set(entry.id, key);
    }
  }

  /** The leases a decided round gives back (see the header for the one kind it keeps). */
  returnedBy(decisions: readonly Decided[], handedOver: Uint8Array): LeaseReturn | undefined {
    const entries: StreamEntry[] = [];
    decisions.forEach((decision, i) => {
      if (mayStillRun(decision, handedOver[i])) this.#admitted.delete(decision.entry.id);
      else entries.push(decision.entry);
    });
    return this.returnedUnseen(entries);
  }

  /** The leases of entries no handler saw, given back. */
  returnedUnseen(entries: readonly StreamEntry[]): LeaseReturn | undefined {
    const byKey = new Map<string, { key: Uint8Array; ids: string[] }>();
    for (const { id } of entries) {
      const key = this.#admitted.get(id);
      if (key === undefined) continue;
      this.#admitted.delete(id);
      const name = byteString(key);
      const group = byKey.get(name);
      if (group === undefined) byKey.set(name, { key, ids: [id] });
      else group.ids.push(id);
    }
    return byKey.size === 0 ? undefined : { token: this.#token, limit: this.#limit, keys: [...byKey.values()] };
  }
}
