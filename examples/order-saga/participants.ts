/**
 * The three participants. Each is bound to one step of this exact definition (workflow,
 * version, digest): a command for anything else is dead-lettered before it gets here.
 * Each handling is one local transaction that also records the result to report; the
 * result is published after commit, signed with the participant's own keyring key.
 */
import { z } from 'zod';
import { commandConsumer, type ConsumerFactory } from '../../src/deployment/consumers';
import type { HandlerContext } from '../../src/deployment/consumers';
import type { SagaDelivery } from '../../src/saga/delivery';
import type { CommandEnvelope } from '../../src/saga/envelopes';
import { Rejection } from '../../src/verdict';
import { CHARGE_LIMIT_CENTS, EventTypes, ORDER_SAGA, ORDER_SAGA_DIGEST, Producers } from './definition';
import { publishOutbox, resultEvent, type StepOutcome } from './messages';
import type { Json, SagaStore, StoreTx } from './store';

export const STOCK_TABLE = 'stock';
const RESERVATIONS = 'reservations';
const CHARGES = 'charges';
const SHIPMENTS = 'shipments';

export interface ParticipantOptions {
  readonly store: SagaStore;
  readonly now?: () => Date;
  /** Charges above this are declined (default CHARGE_LIMIT_CENTS). */
  readonly chargeLimitCents?: number;
}

const itemInput = z.object({ order_id: z.string(), sku: z.string(), qty: z.int().positive() });
const chargeInput = z.object({ order_id: z.string(), amount_cents: z.int().min(0) });

function inputOf<T>(schema: z.ZodType<T>, command: CommandEnvelope): T {
  const parsed = schema.safeParse(command.input);
  if (!parsed.success) throw new Rejection('command_input_invalid', `input of ${command.step} does not match its schema`);
  return parsed.data;
}

type StepLogic = (command: CommandEnvelope, tx: StoreTx) => StepOutcome;

/** One participant: its step, its producer identity and result event type, and its local logic. */
function participant(
  step: string,
  producer: string,
  resultType: string,
  logic: StepLogic,
  { store, now = () => new Date() }: ParticipantOptions,
): ConsumerFactory {
  const route = { workflow: ORDER_SAGA.workflow, definitionVersion: ORDER_SAGA.version, definitionDigest: ORDER_SAGA_DIGEST, step };
  return commandConsumer(route, async ({ envelope }: SagaDelivery<CommandEnvelope>, context: HandlerContext) => {
    const { outbox, duplicate } = await store.transact(producer, envelope.command_id, (tx) => [
      resultEvent(resultType, envelope, logic(envelope, tx), now()),
    ]);
    await publishOutbox(context.publisherFor(producer), outbox);
    return duplicate ? 'duplicate' : 'committed';
  });
}

const succeeded = (output: Json): StepOutcome => ({ outcome: 'succeeded', output });
const failed = (code: string, message: string): StepOutcome => ({ outcome: 'failed', error: { code, message } });

/** Reserve takes stock; its compensation gives back exactly what this order reserved. */
export function inventory(options: ParticipantOptions): ConsumerFactory {
  return participant('reserve', Producers.inventory, EventTypes.inventoryResult, (command, tx) => {
    const { order_id, sku, qty } = inputOf(itemInput, command);
    if (command.action === 'compensate') {
      const held = tx.get<{ sku: string; qty: number }>(RESERVATIONS, order_id);
      if (held) tx.put(STOCK_TABLE, held.sku, (tx.get<number>(STOCK_TABLE, held.sku) ?? 0) + held.qty);
      tx.put(RESERVATIONS, order_id, null);
      return succeeded({ released: held?.qty ?? 0 });
    }
    const available = tx.get<number>(STOCK_TABLE, sku) ?? 0;
    if (available < qty) return failed('out_of_stock', `${available} of ${sku} in stock, ${qty} asked`);
    tx.put(STOCK_TABLE, sku, available - qty);
    tx.put(RESERVATIONS, order_id, { sku, qty });
    return succeeded({ reserved: qty });
  }, options);
}

/** Charge declines amounts above the limit (deterministic, so the example always compensates it). */
export function payment(options: ParticipantOptions): ConsumerFactory {
  const limit = options.chargeLimitCents ?? CHARGE_LIMIT_CENTS;
  return participant('charge', Producers.payment, EventTypes.paymentResult, (command, tx) => {
    const { order_id, amount_cents } = inputOf(chargeInput, command);
    if (command.action === 'compensate') {
      tx.put(CHARGES, order_id, { amount_cents: 0, refunded: tx.get<{ amount_cents: number }>(CHARGES, order_id)?.amount_cents ?? 0 });
      return succeeded({ refunded: true });
    }
    if (amount_cents > limit) return failed('charge_declined', `amount ${amount_cents} exceeds the limit of ${limit} cents`);
    tx.put(CHARGES, order_id, { amount_cents });
    return succeeded({ charge_id: `ch-${order_id}` });
  }, options);
}

/** Ship is the last step: it is never compensated (nothing after it can fail). */
export function shipping(options: ParticipantOptions): ConsumerFactory {
  return participant('ship', Producers.shipping, EventTypes.shippingResult, (command, tx) => {
    const { order_id, sku, qty } = inputOf(itemInput, command);
    if (command.action === 'compensate') throw new Rejection('no_compensation', 'shipping has no compensation');
    const tracking = `trk-${order_id}`;
    tx.put(SHIPMENTS, order_id, { sku, qty, tracking });
    return succeeded({ tracking });
  }, options);
}
