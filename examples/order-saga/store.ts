/**
 * The example's local state behind a small interface: an inbox (which messages a consumer
 * has handled, and what it must publish because of them) and a few tables, changed
 * together in one local transaction. The in-memory store serves the local stack and the
 * tests; a real deployment implements `SagaStore` over its database (one transaction
 * writing the inbox row, the outbox rows and the state).
 */

/** A follow-up event decided inside a transaction and published after it committed (the outbox). */
export interface OutgoingEvent {
  readonly eventType: string;
  readonly eventId: string;
  /** JSON text (an encoded saga envelope). */
  readonly payload: string;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * What a transaction sees: reads include its own writes; nothing is visible to others
 * before commit. Values are plain data (copied in and out, never shared).
 */
export interface StoreTx {
  get<T>(table: string, key: string): T | undefined;
  put<T>(table: string, key: string, value: T): void;
}

export interface TransactResult {
  /** The events the (first) handling decided to publish. */
  readonly outbox: readonly OutgoingEvent[];
  /** True when the inbox already held the message: `work` did not run again. */
  readonly duplicate: boolean;
}

export interface SagaStore {
  /**
   * Handles `messageId` for `consumer` exactly once: runs `work` and commits its writes,
   * the inbox record and the outbox together; if `work` throws, nothing is committed. A
   * message already in the inbox returns the outbox recorded then, so the caller can
   * publish it again (the publisher's dedupe window makes that harmless).
   */
  transact(consumer: string, messageId: string, work: (tx: StoreTx) => OutgoingEvent[]): Promise<TransactResult>;
  /** Every row of a table (for the status page and tests). */
  rows<T>(table: string): Promise<Array<[string, T]>>;
  /** Called after each committed write to `table`; returns an unsubscribe function. */
  subscribe<T>(table: string, listener: (key: string, value: T) => void): () => void;
}

type Listener = (key: string, value: unknown) => void;

export function createMemoryStore(seed: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {}): SagaStore {
  const tables = new Map<string, Map<string, unknown>>();
  const inbox = new Map<string, readonly OutgoingEvent[]>();
  const listeners = new Map<string, Set<Listener>>();
  const table = (name: string) => tables.get(name) ?? tables.set(name, new Map()).get(name)!;
  for (const [name, rows] of Object.entries(seed)) {
    for (const [key, value] of Object.entries(rows)) table(name).set(key, structuredClone(value));
  }

  return {
    async transact(consumer, messageId, work) {
      const inboxKey = `${consumer}\u0000${messageId}`;
      const recorded = inbox.get(inboxKey);
      if (recorded) return { outbox: recorded, duplicate: true };
      // Writes are staged and applied only when `work` returns: a throw commits nothing.
      const staged = new Map<string, Map<string, unknown>>();
      const tx: StoreTx = {
        get: <T>(name: string, key: string) => {
          const writes = staged.get(name);
          const value = writes?.has(key) ? writes.get(key) : table(name).get(key);
          return value === undefined ? undefined : (structuredClone(value) as T);
        },
        put: (name, key, value) => {
          (staged.get(name) ?? staged.set(name, new Map()).get(name)!).set(key, structuredClone(value));
        },
      };
      const outbox = Object.freeze(work(tx).map((event) => Object.freeze({ ...event })));
      inbox.set(inboxKey, outbox);
      for (const [name, writes] of staged) {
        for (const [key, value] of writes) {
          table(name).set(key, value);
          for (const listener of listeners.get(name) ?? []) listener(key, structuredClone(value));
        }
      }
      return { outbox, duplicate: false };
    },
    async rows<T>(name: string) {
      return [...table(name)].map(([key, value]) => [key, structuredClone(value) as T] as [string, T]);
    },
    subscribe<T>(name: string, listener: (key: string, value: T) => void) {
      const set = listeners.get(name) ?? listeners.set(name, new Set()).get(name)!;
      set.add(listener as Listener);
      return () => set.delete(listener as Listener);
    },
  };
}
