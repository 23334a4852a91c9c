/**
 * A schema failure as ConfigProblems: every config parser (consumer, publisher, retention,
 * stream auth, deployment) reports zod's issues in this one shape, so a ConfigError reads the
 * same whichever layer raised it.
 */
import type { ZodError } from 'zod';
import type { ConfigProblem } from './errors';

export function problemsOf(error: ZodError): ConfigProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    // Zod's own messages describe expectations, never the received value; unknown keys name the key only.
    message: issue.message,
  }));
}
