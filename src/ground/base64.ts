/**
 * Padded standard base64 (RFC 4648 §4): whole groups of 4 characters, `=` only as the last
 * one or two. Checked as one character run plus the length: a pattern with a repeated group
 * (`(?:[A-Za-z0-9+/]{4})*…`) backtracks per group, and on a string of several megabytes it
 * overflowed the stack ("Maximum call stack size exceeded", seen at 8 MB).
 */
const BASE64_RUN = /^[A-Za-z0-9+/]*={0,2}$/;

export function isPaddedBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_RUN.test(text);
}
