/**
 * A schema failure as ConfigProblems: every config parser (consumer, publisher, retention,
 * stream auth, deployment) reports zod's issues in this one shape, so a ConfigError reads the
 * same whichever layer raised it.
 */
import type * as z from 'zod/mini';
import type { ConfigProblem } from './errors';

/** Any zod error (classic or mini: both carry the core's issues). */
export function problemsOf(error: { readonly issues: readonly z.core.$ZodIssue[] }): ConfigProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    // Zod's own messages describe expectations, never the received value; unknown keys name the key only.
    message: issue.message,
  }));
}
