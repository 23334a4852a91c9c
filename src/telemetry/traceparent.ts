/**
 * W3C Trace Context `traceparent` (version-traceid-parentid-flags). Publishers refuse a
 * malformed one; consumers parse what they received and hand the context to handlers —
 * a malformed or absent header never blocks delivery, it just yields no context.
 */

export interface TraceContext {
  /** The header exactly as carried by the entry (and covered by its signature). */
  readonly traceparent: string;
  readonly version: string;
  readonly traceId: string;
  readonly parentId: string;
  readonly flags: number;
  readonly sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_PARENT_ID = '0'.repeat(16);

export function parseTraceparent(text: string | undefined): TraceContext | undefined {
  if (text === undefined) return undefined;
  const match = TRACEPARENT.exec(text);
  if (!match) return undefined;
  const [, version, traceId, parentId, flagsHex, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is forbidden; version 00 has exactly four parts; later versions may append more.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_PARENT_ID) return undefined;
  const flags = Number.parseInt(flagsHex, 16);
  return { traceparent: text, version, traceId, parentId, flags, sampled: (flags & 1) === 1 };
}

export function isValidTraceparent(text: string): boolean {
  return parseTraceparent(text) !== undefined;
}
