/**
 * A schema failure as ConfigProblems: every config parser (consumer, publisher, retention,
 * stream auth, deployment) reports zod's issues in this one shape, so a ConfigError reads the
 * same whichever layer raised it.
 */
import type * as z from 'zod/mini';
import type { ConfigProblem } from './errors';

/** Any zod error (classic or mini: both carry the core's issues). */
export function problemsOf(error: { readonly issues: readonly z.core.$ZodIssue[] }): ConfigProblem[] {
  return error.issues.flatMap(withinUnion).map((issue) => ({
    path: issue.path.map(String).join('.'),
    // Zod's own messages describe expectations, never the received value; unknown keys name the key only.
    message: issue.message,
  }));
}

/**
 * A union's failure, read through the one branch that accepted the value's type (e.g. `flow`:
 * `false` or an object — an object with a bad field names that field, not "Invalid input").
 */
function withinUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const typeOnly = (branch: readonly z.core.$ZodIssue[]) => branch.every((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value'));
  const deeper = issue.errors.filter((branch) => !typeOnly(branch));
  if (deeper.length !== 1) return [issue];
  return deeper[0]!.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
}
