/**
 * Durations on the command line: `500ms`, `30s`, `10m`, `2h`, `7d`. The unit is required: a
 * bare `90` could mean seconds as easily as milliseconds, and guessing wrong is silent.
 */
import { UsageError } from './exit-codes';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d+)(ms|s|m|h|d)$/;

export function parseDuration(text: string, option: string): number {
  const match = PATTERN.exec(text.trim());
  if (/^\d+$/.test(text.trim())) throw new UsageError(`--${option} needs a unit: ${text.trim()}ms, ${text.trim()}s, …`);
  if (!match) throw new UsageError(`--${option} must be a duration like 500ms, 30s, 10m, 2h or 7d (got ${JSON.stringify(text)})`);
  const value = Number(match[1]) * UNITS[match[2]!]!;
  if (!Number.isSafeInteger(value)) throw new UsageError(`--${option} is too large`);
  return value;
}

export function parseCount(text: string, option: string, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) throw new UsageError(`--${option} must be an integer in 1..=${max}`);
  return value;
}

/** A short human form of an age in ms: `850ms`, `42s`, `12m`, `3h`, `2d`. */
export function formatAge(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${Math.floor(ms / 1_000)}s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)}h`;
  return `${Math.floor(ms / 86_400_000)}d`;
}
