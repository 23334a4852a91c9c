/**
 * The Redis Cluster hash-tag rule (SPEC §3.4), in one place: which part of a key Cluster
 * hashes, and the check every config with a `keyTag` runs on its keys (consumer, publisher
 * and retention configs once each wrote their own).
 */
import type { ConfigProblem } from '../ground/errors';

/**
 * The part of a key Redis Cluster hashes: the text between the first `{` and the next `}`
 * when non-empty, otherwise the whole key.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return key.slice(open + 1, close);
  }
  return key;
}

export function hasHashTag(key: string): boolean {
  return hashTagOf(key) !== key;
}

/**
 * With a key tag configured, every key must hash on exactly `{keyTag}`: one problem per key
 * that does not, at the path the caller names. Without a key tag there is nothing to check.
 */
export function keyTagProblems(keyTag: string | undefined, keys: Iterable<readonly [path: string, key: string]>): ConfigProblem[] {
  if (keyTag === undefined) return [];
  const problems: ConfigProblem[] = [];
  for (const [path, key] of keys) {
    if (hashTagOf(key) !== keyTag) problems.push({ path, message: `must carry the hash tag {${keyTag}} so every key shares one Cluster slot` });
  }
  return problems;
}
