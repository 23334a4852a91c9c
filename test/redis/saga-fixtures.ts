/** Envelopes and hand-signed entries for the signed-entry and saga suites. */
import { SecretKey } from '../../src/auth/secret';
import { signEntry } from '../../src/auth/signature';
import type { CommandEnvelope, ResultEnvelope } from '../../src/saga/envelopes';

export const DIGEST = 'd'.repeat(64);
export const OTHER_DIGEST = 'e'.repeat(64);
export const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
export const OTHER_TRACEPARENT = '00-11111111111111111111111111111111-2222222222222222-01';

export const ROUTE = { workflow: 'order', definitionVersion: 3, definitionDigest: DIGEST, step: 'reserve_stock' } as const;

export function command(id: string, overrides: Partial<Record<keyof CommandEnvelope, unknown>> = {}): Record<string, unknown> {
  return {
    command_id: id,
    instance_id: 'order-17',
    workflow: ROUTE.workflow,
    definition_version: ROUTE.definitionVersion,
    definition_digest: DIGEST,
    step: ROUTE.step,
    action: 'execute',
    issued_at: '2026-04-01T12:00:00Z',
    input: { sku: 'A-1', qty: 2 },
    ...overrides,
  };
}

export function result(id: string, overrides: Partial<Record<keyof ResultEnvelope, unknown>> = {}): Record<string, unknown> {
  return {
    result_id: id,
    instance_id: 'order-17',
    workflow: ROUTE.workflow,
    definition_version: ROUTE.definitionVersion,
    definition_digest: DIGEST,
    step: ROUTE.step,
    action: 'execute',
    outcome: 'succeeded',
    output: { reserved: true },
    completed_at: '2026-04-01T12:00:01Z',
    ...overrides,
  };
}

export interface HandSigned {
  readonly stream: string;
  readonly eventId: string;
  readonly eventType?: string;
  readonly payload: string | Uint8Array;
  readonly traceparent?: string;
  readonly keyId: string;
  readonly key: string;
}

/** The fields a publisher would write, signed in the test, as an ordered map to tamper with. */
export async function handSigned(spec: HandSigned): Promise<Map<string, Buffer | string>> {
  const eventType = spec.eventType ?? 'saga.command';
  const fields = new Map<string, Buffer | string>([
    ['event', eventType],
    ['event_id', spec.eventId],
    ['payload', typeof spec.payload === 'string' ? spec.payload : Buffer.from(spec.payload)],
  ]);
  if (spec.traceparent !== undefined) fields.set('traceparent', spec.traceparent);
  const sig = await signEntry(SecretKey.from(spec.key), {
    stream: spec.stream,
    eventId: spec.eventId,
    eventType,
    payload: spec.payload,
    traceparent: spec.traceparent,
  });
  fields.set('key_id', spec.keyId);
  fields.set('sig', sig);
  return fields;
}
