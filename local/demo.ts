/**
 * The hook a config module offers the local stack (`export const demo`): events to
 * publish through the publish API on startup, and a feed of finished instances to print.
 * The example order saga implements it; a config without it simply runs no demo.
 */
import type { Postgres } from '../src/deployment/postgres';

export interface LocalDemo {
  /** The publish-API producer whose token places the events. */
  readonly producer: string;
  /** Events to publish on startup; ids unique per `runId` so a restart starts fresh instances. */
  events(runId: string): ReadonlyArray<{ readonly eventType: string; readonly eventId: string; readonly payload: unknown }>;
  /** One object per instance reaching a final state; returns an unsubscribe function. */
  onFinished(listener: (fields: Record<string, unknown>) => void): () => void;
  /** Domain state for the status page, read from the deployment's database. */
  snapshot(postgres: () => Promise<Postgres>): Promise<Record<string, unknown>>;
}

export function isLocalDemo(value: unknown): value is LocalDemo {
  const demo = value as Partial<LocalDemo> | null | undefined;
  return (
    typeof demo === 'object' &&
    demo !== null &&
    typeof demo.producer === 'string' &&
    typeof demo.events === 'function' &&
    typeof demo.onFinished === 'function' &&
    typeof demo.snapshot === 'function'
  );
}
