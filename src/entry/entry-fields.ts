/**
 * An entry's fields as a ReadonlyMap, kept over the reply's own `[name, value, ...]` array
 * instead of copied into a Map (issue 15). A Map per entry — its hash table and one slot per
 * field — was the largest allocation a small entry cost after the reply itself, and a
 * consumer reads each field once or twice: a scan of six names is cheaper than a hash
 * table it has to build first.
 *
 * Behaves as the Map it replaces: `get`/`has`/`size` answer as if every pair were `set` in
 * stream order (the last value of a repeated name wins; `size` counts distinct names), and
 * iteration — rare: dashboards, diagnostics, byte sampling — goes through exactly that Map,
 * built on demand, so its order and contents cannot drift from Map semantics.
 */

/**
 * The field names of an entry, in stream order (one per pair). Entries of one stream
 * almost always share their names, so consecutive entries with the same names share one
 * layout (see parseEntries), and an entry adds no names array of its own.
 */
export interface FieldLayout {
  /**
   * The names as text that stands for their exact bytes (SPEC §3.4): equal text, equal
   * bytes. A name that is not UTF-8 is held surrogate-escaped (see entry.ts fieldName).
   */
  readonly names: readonly string[];
  /** Distinct names: fewer than names.length when a name repeats. */
  readonly size: number;
  /** True when a name is not well-formed UTF-8: the entry is malformed (SPEC §3.4). */
  readonly nameNotUtf8: boolean;
}

export const NO_FIELDS: FieldLayout = Object.freeze({ names: Object.freeze([]), size: 0, nameNotUtf8: false });

/** A layout for these names, counting distinct ones (a repeat makes the entry malformed, SPEC §4). */
export function layoutOf(names: readonly string[], nameNotUtf8: boolean): FieldLayout {
  return { names, size: distinctCount(names), nameNotUtf8 };
}

function distinctCount(names: readonly string[]): number {
  // Entries have a handful of fields: a quadratic scan allocates nothing; a Set past that.
  if (names.length > 16) return new Set(names).size;
  let distinct = 0;
  for (let i = 0; i < names.length; i += 1) {
    if (names.indexOf(names[i]!) === i) distinct += 1;
  }
  return distinct;
}

export class EntryFields implements ReadonlyMap<string, Uint8Array> {
  readonly #layout: FieldLayout;
  /** `[name, value, ...]`, every element checked to be bytes; values are read at odd indexes. */
  readonly #pairs: readonly unknown[];
  #map: Map<string, Uint8Array> | undefined;

  /** `pairs` must hold bytes at every index below 2 × layout.names.length (parseEntries checks). */
  constructor(layout: FieldLayout, pairs: readonly unknown[]) {
    this.#layout = layout;
    this.#pairs = pairs;
  }

  get size(): number {
    return this.#layout.size;
  }

  get(name: string): Uint8Array | undefined {
    const { names } = this.#layout;
    // From the end: the last value of a repeated name is the one a Map would keep.
    for (let i = names.length - 1; i >= 0; i -= 1) {
      if (names[i] === name) return this.#pairs[2 * i + 1] as Uint8Array;
    }
    return undefined;
  }

  has(name: string): boolean {
    return this.#layout.names.includes(name);
  }

  forEach(callback: (value: Uint8Array, key: string, map: ReadonlyMap<string, Uint8Array>) => void, thisArg?: unknown): void {
    this.#asMap().forEach((value, key) => callback.call(thisArg, value, key, this));
  }

  entries(): MapIterator<[string, Uint8Array]> {
    return this.#asMap().entries();
  }

  keys(): MapIterator<string> {
    return this.#asMap().keys();
  }

  values(): MapIterator<Uint8Array> {
    return this.#asMap().values();
  }

  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'EntryFields';
  }

  /** console.log / util.inspect show the fields as the Map they stand for, not an empty object. */
  [Symbol.for('nodejs.util.inspect.custom')](): Map<string, Uint8Array> {
    return this.#asMap();
  }

  /**
   * Bytes of the names (as text length) and values, the way entryBytes counts them, without
   * building the Map: a repeated name counts once, with its last value, as in the Map.
   */
  byteSize(): number {
    if (this.#layout.size < this.#layout.names.length) {
      let bytes = 0;
      for (const [name, value] of this.#asMap()) bytes += name.length + value.byteLength;
      return bytes;
    }
    const { names } = this.#layout;
    let bytes = 0;
    for (let i = 0; i < names.length; i += 1) bytes += names[i]!.length + (this.#pairs[2 * i + 1] as Uint8Array).byteLength;
    return bytes;
  }

  #asMap(): Map<string, Uint8Array> {
    if (this.#map !== undefined) return this.#map;
    const map = new Map<string, Uint8Array>();
    const { names } = this.#layout;
    for (let i = 0; i < names.length; i += 1) map.set(names[i]!, this.#pairs[2 * i + 1] as Uint8Array);
    this.#map = map;
    return map;
  }
}
