/**
 * A value built on its first use, then shared. Schemas go through this (or `z.lazy`) so
 * that importing a module builds nothing: a Lambda's cold start pays only for the schemas
 * its own work parses (a trim function never builds the saga envelopes).
 */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
