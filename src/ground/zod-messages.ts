/**
 * The parse options every library schema parses with, so problems read "Too small: expected
 * number to be >=1", not "Invalid input". zod/mini ships no messages: classic zod installed
 * its English locale globally on first use, which the library relied on. Passed per parse
 * rather than installed with `z.config`, so importing the library changes no global state;
 * an application that configured its own zod locale keeps it (this map then yields to it).
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

let english: z.core.$ZodErrorMap | undefined;

export const IN_ENGLISH: z.core.ParseContext<z.core.$ZodIssue> = {
  error: (issue) => (z.config().localeError ? undefined : (english ??= en().localeError)(issue)),
};
