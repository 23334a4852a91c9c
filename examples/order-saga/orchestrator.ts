/**
 * The orchestrator's two consumers: order intake (`order.placed` from the shop, through
 * the publish API) starts an instance; the results consumer advances it. Each handling is
 * one local transaction (state + inbox + outbox), then the outbox is published signed as
 * the orchestrator. A result for an unknown instance is a deterministic failure: it is
 * dead-lettered rather than retried forever.
 */
import { z } from 'zod';
import { entryConsumer, resultConsumer, type ConsumerFactory } from '../../src/deployment/consumers';
import { jsonPayload } from '../../src/processor';
import { Rejection } from '../../src/verdict';
import { Producers } from './definition';
import { commandEvent, publishOutbox } from './messages';
import { onResult, start, type OrderState } from './state-machine';
import type { SagaStore } from './store';

export const ORDERS_TABLE = 'orders';
const INBOX = 'orchestrator';

export const orderPlacedSchema = z.strictObject({
  order_id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1..=64 of A-Z a-z 0-9 . _ -'),
  sku: z.string().min(1).max(64),
  qty: z.int().min(1).max(1_000),
  amount_cents: z.int().min(0),
});
export type OrderPlaced = z.infer<typeof orderPlacedSchema>;

export interface OrchestratorOptions {
  readonly store: SagaStore;
  readonly now?: () => Date;
}

export function orderIntake({ store, now = () => new Date() }: OrchestratorOptions): ConsumerFactory {
  return entryConsumer<OrderPlaced>(async ({ eventId, payload }, context) => {
    const { outbox, duplicate } = await store.transact(INBOX, eventId, (tx) => {
      // The same order placed again under another event id is already under way.
      if (tx.get<OrderState>(ORDERS_TABLE, payload.order_id)) return [];
      const { state, commands } = start(payload);
      tx.put(ORDERS_TABLE, state.order_id, state);
      return commands.map((spec) => commandEvent(spec, now()));
    });
    await publishOutbox(context.publisherFor(Producers.orchestrator), outbox);
    return duplicate ? 'duplicate' : 'committed';
  }, jsonPayload(orderPlacedSchema));
}

export function orchestratorResults({ store, now = () => new Date() }: OrchestratorOptions): ConsumerFactory {
  return resultConsumer(
    async ({ envelope }, context) => {
      const { outbox, duplicate } = await store.transact(INBOX, envelope.result_id, (tx) => {
        const order = tx.get<OrderState>(ORDERS_TABLE, envelope.instance_id);
        if (!order) throw new Rejection('unknown_instance', `no order ${envelope.instance_id}`);
        const transition = onResult(order, envelope);
        if (!transition) return [];
        tx.put(ORDERS_TABLE, order.order_id, transition.state);
        return transition.commands.map((spec) => commandEvent(spec, now()));
      });
      await publishOutbox(context.publisherFor(Producers.orchestrator), outbox);
      return duplicate ? 'duplicate' : 'committed';
    },
    { allowedProducers: { reserve: [Producers.inventory], charge: [Producers.payment], ship: [Producers.shipping] } },
  );
}
