/**
 * A ReadonlyMap that is read-only at run time too. `Object.freeze(new Map())` still lets
 * `set`, `delete` and `clear` change its entries (they live in an internal slot, not in
 * properties), and `ReadonlyMap` is only a type: whoever holds a Map exposed as config (a
 * publisher's routes) could redirect what the owner does with it. This wrapper keeps its
 * Map private, has no mutating method, and is frozen itself.
 *
 * @example
 * const routes = new FrozenMap([['order.placed', route]]);
 * routes.get('order.placed'); // route
 * (routes as unknown as Map<string, unknown>).set; // undefined
 */
export class FrozenMap<K, V> implements ReadonlyMap<K, V> {
  readonly #map: Map<K, V>;

  constructor(entries: Iterable<readonly [K, V]>) {
    this.#map = new Map(entries);
    Object.freeze(this);
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    this.#map.forEach((value, key) => callback.call(thisArg, value, key, this));
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map[Symbol.iterator]();
  }

  /**
   * Node's util.inspect shows the entries (as it would a Map) instead of an empty object:
   * operators read parsed configs in logs and REPLs. Values keep their own redaction.
   * A symbol from the global registry, so nothing Node-specific is imported.
   */
  [Symbol.for('nodejs.util.inspect.custom')](depth: number, options: object, inspect: (value: unknown, options: object) => string): string {
    return `FrozenMap ${inspect(this.#map, { ...options, depth })}`;
  }
}
