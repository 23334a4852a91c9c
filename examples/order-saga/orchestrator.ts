/**
 * The orchestrator's two consumers: order intake (`order.placed` from the shop, through
 * the publish API) starts an instance; the results consumer advances it. Each handling is
 * ONE Postgres transaction — inbox row, order and instance state, and the next commands in
 * the outbox — which the relay publishes, signed as the orchestrator, after commit. A result
 * for an unknown instance is a deterministic failure: dead-lettered, not retried forever.
 *
 * Timeouts (saga-streams' stepTimeout): the transaction that issues the charge also enqueues
 * its timeout, a result to self due `pay_within_s` later, which the relay hands to the
 * results stream's schedule; the transaction that records the charge's answer enqueues the
 * timeout's cancel. Both commit or roll back with the step. The results consumer admits the
 * orchestrator's own identity for timeouts only (`timeoutProducer`).
 */
// zod/mini, as the library itself uses: classic zod's chained methods keep its whole API in
// every Lambda and Worker bundle (~20 KiB gzip, ~8 ms of cold start).
import * as z from 'zod/mini';
import { entryConsumer, jsonPayload, Rejection, resultConsumer, type ConsumerFactory, type HandlerContext } from 'saga-streams';
import type { SqlTx } from 'saga-streams/postgres';
import { ORDER_SAGA, Producers } from './definition';
import { commandEvent, timeoutCancel, timeoutEvent } from './messages';
import type { SagaTables } from './schema';
import { finishedNews, onResult, start, type OrderState, type Transition } from './state-machine';

const INBOX = 'orchestrator';

export const orderPlacedSchema = z.strictObject({
  order_id: z.string().check(z.regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1..=64 of A-Z a-z 0-9 . _ -')),
  sku: z.string().check(z.minLength(1), z.maxLength(64)),
  qty: z.int().check(z.minimum(1), z.maximum(1_000)),
  amount_cents: z.int().check(z.minimum(0)),
  /** How long the payment may take, seconds (default DEFAULT_PAY_WITHIN_S); then the order is compensated. */
  pay_within_s: z.optional(z.int().check(z.minimum(1), z.maximum(86_400))),
});
export type OrderPlaced = z.infer<typeof orderPlacedSchema>;

export interface OrchestratorOptions {
  readonly tables: SagaTables;
  readonly now?: () => Date;
  /** Called after the commit that brought an instance to a final state. */
  readonly onFinished?: (order: OrderState) => void;
}

async function saveInstance(tx: SqlTx, tables: SagaTables, state: OrderState): Promise<void> {
  await tx.query(
    `INSERT INTO ${tables.instances} (instance_id, workflow, status, state) VALUES ($1, $2, $3, $4::jsonb) ` +
      `ON CONFLICT (instance_id) DO UPDATE SET status = excluded.status, state = excluded.state, updated_at = now()`,
    [state.order_id, ORDER_SAGA.workflow, state.status, JSON.stringify(state)],
  );
}

/**
 * The transition, written in `tx`: the state, then through the outbox (in this order, under
 * the instance's key) the cancel of the timeout it disarms, its commands, and the timeout it
 * arms — so all of it is decided exactly when the state change commits.
 */
async function apply(tx: SqlTx, context: HandlerContext, tables: SagaTables, { state, commands, arm, cancel }: Transition, now: Date) {
  const { outbox } = await context.postgres();
  await saveInstance(tx, tables, state);
  if (cancel !== undefined) await outbox.enqueueCancel(tx, timeoutCancel(state.order_id, cancel));
  for (const spec of commands) {
    await outbox.enqueue(tx, { producer: Producers.orchestrator, orderingKey: spec.instanceId, ...commandEvent(spec, now) });
    if (arm?.step === spec.step) await outbox.enqueue(tx, timeoutEvent(spec, arm.afterMs, now));
  }
}

export function orderIntake({ tables, now = () => new Date() }: OrchestratorOptions): ConsumerFactory {
  return entryConsumer<OrderPlaced>(async ({ eventId, payload }, context) => {
    const { db, inbox } = await context.postgres();
    return inbox.handle(db, { consumer: INBOX, eventId }, async (tx) => {
      const placed = await tx.query(
        `INSERT INTO ${tables.orders} (order_id, sku, qty, amount_cents) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1`,
        [payload.order_id, payload.sku, payload.qty, payload.amount_cents],
      );
      // The same order placed again under another event id is already under way.
      if (placed.length === 0) return;
      await apply(tx, context, tables, start(payload), now());
    });
  }, jsonPayload(orderPlacedSchema));
}

export function orchestratorResults({ tables, now = () => new Date(), onFinished }: OrchestratorOptions): ConsumerFactory {
  return resultConsumer(
    async ({ envelope }, context) => {
      const { db, inbox } = await context.postgres();
      let finished: OrderState | undefined;
      const outcome = await inbox.handle(db, { consumer: INBOX, eventId: envelope.result_id }, async (tx) => {
        const [row] = await tx.query<{ state: OrderState }>(`SELECT state FROM ${tables.instances} WHERE instance_id = $1 FOR UPDATE`, [envelope.instance_id]);
        if (!row) throw new Rejection('unknown_instance', `no order ${envelope.instance_id}`);
        // Not awaited (late, repeated, stale — a timeout that fired after its answer): ignored.
        const transition = onResult(row.state, envelope);
        if (!transition) return;
        await apply(tx, context, tables, transition, now());
        if (finishedNews(row.state, transition.state)) finished = transition.state;
      });
      if (outcome === undefined && finished) onFinished?.(finished);
      return outcome;
    },
    {
      allowedProducers: { reserve: [Producers.inventory], charge: [Producers.payment], ship: [Producers.shipping] },
      // The orchestrator signs its own step timeouts on the results stream, and nothing else there.
      timeoutProducer: Producers.orchestrator,
    },
  );
}
