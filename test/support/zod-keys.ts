/**
 * Every key a zod (mini) schema accepts, as dotted paths: the keys of each object, through
 * optional, default, lazy, pipe, union and array wrappers; a record's entries appear as `*`
 * (`streams.*.auth`). Used to hold the configuration reference (docs/configuration.md) to
 * the schemas. Reads zod's definitions (`_zod.def`), which zod 4 documents for such tools.
 */

interface SchemaDef {
  readonly type: string;
  readonly shape?: Record<string, unknown>;
  readonly innerType?: unknown;
  readonly getter?: () => unknown;
  readonly in?: unknown;
  readonly valueType?: unknown;
  readonly options?: readonly unknown[];
  readonly element?: unknown;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nonoptional', 'readonly', 'catch', 'nullable']);

function defOf(schema: unknown): SchemaDef {
  const def = (schema as { _zod?: { def?: SchemaDef } })._zod?.def;
  if (def === undefined) throw new TypeError('not a zod schema');
  return def;
}

function collect(schema: unknown, path: readonly string[], into: Set<string>): void {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return collect(def.innerType, path, into);
  switch (def.type) {
    case 'lazy':
      return collect(def.getter!(), path, into);
    case 'pipe':
      return collect(def.in, path, into);
    case 'array':
      return collect(def.element, path, into);
    case 'record':
      return collect(def.valueType, [...path, '*'], into);
    case 'union':
      for (const option of def.options!) collect(option, path, into);
      return;
    case 'object':
      for (const [key, value] of Object.entries(def.shape!)) {
        into.add([...path, key].join('.'));
        collect(value, [...path, key], into);
      }
      return;
    default:
      // A leaf (string, number, enum, custom, unknown…): its key was added by its object.
      return;
  }
}

/** The dotted paths of every key `schema` accepts, in schema order. */
export function configKeysOf(schema: unknown): string[] {
  const keys = new Set<string>();
  collect(schema, [], keys);
  return [...keys];
}
