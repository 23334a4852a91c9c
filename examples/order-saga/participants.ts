/**
 * The three participants. Each is bound to one step of this exact definition (workflow,
 * version, digest): a command for anything else is dead-lettered before it gets here.
 * Each handling is one Postgres transaction: the inbox row, the step's own tables, and the
 * result in the outbox, which the relay publishes signed with the participant's keyring key.
 * The payment participant answers a charge under review late: its result goes into the
 * outbox due `reviewMs` later (the provider's answer arriving afterwards), which is how the
 * demo shows a charge timing out and its late success being refunded.
 */
import * as z from 'zod/mini';
import { commandConsumer, Rejection, type CommandEnvelope, type ConsumerFactory } from 'saga-streams';
import type { SqlTx } from 'saga-streams/postgres';
import { CHARGE_LIMIT_CENTS, EventTypes, ORDER_SAGA, ORDER_SAGA_DIGEST, PAYMENT_REVIEW_MS, Producers, REVIEW_ABOVE_CENTS } from './definition';
import { resultEvent, type Json, type StepOutcome } from './messages';
import type { SagaTables } from './schema';

export interface ParticipantOptions {
  readonly tables: SagaTables;
  readonly now?: () => Date;
  /** Charges above this are declined (default CHARGE_LIMIT_CENTS). */
  readonly chargeLimitCents?: number;
  /** Charges above this (and within the limit) are answered `reviewMs` late (default REVIEW_ABOVE_CENTS). */
  readonly reviewAboveCents?: number;
  /** How late a reviewed charge is answered, ms (default PAYMENT_REVIEW_MS). */
  readonly reviewMs?: number;
}

const itemInput = z.object({ order_id: z.string(), sku: z.string(), qty: z.int().check(z.positive()) });
const chargeInput = z.object({ order_id: z.string(), amount_cents: z.int().check(z.minimum(0)) });

function inputOf<T>(schema: z.ZodMiniType<T>, command: CommandEnvelope): T {
  const parsed = schema.safeParse(command.input);
  if (!parsed.success) throw new Rejection('command_input_invalid', `input of ${command.step} does not match its schema`);
  return parsed.data;
}

type StepLogic = (command: CommandEnvelope, tx: SqlTx, tables: SagaTables) => Promise<StepOutcome>;
/** ms after which the result of `command` is delivered, or undefined: at once. */
type AnswerDelay = (command: CommandEnvelope) => number | undefined;

/** One participant: its step, its producer identity and result event type, and its local logic. */
function participant(
  step: string,
  producer: string,
  resultType: string,
  logic: StepLogic,
  { tables, now = () => new Date() }: ParticipantOptions,
  answerDelay: AnswerDelay = () => undefined,
): ConsumerFactory {
  const route = { workflow: ORDER_SAGA.workflow, definitionVersion: ORDER_SAGA.version, definitionDigest: ORDER_SAGA_DIGEST, step };
  return commandConsumer(route, async ({ envelope }, context) => {
    const { db, inbox, outbox } = await context.postgres();
    return inbox.handle(db, { consumer: producer, eventId: envelope.command_id }, async (tx) => {
      const outcome = await logic(envelope, tx, tables);
      const at = now();
      const delay = answerDelay(envelope);
      const due = delay === undefined ? {} : { deliverAt: at.getTime() + delay };
      await outbox.enqueue(tx, { producer, orderingKey: envelope.instance_id, ...resultEvent(resultType, envelope, outcome, at), ...due });
    });
  });
}

const succeeded = (output: Json): StepOutcome => ({ outcome: 'succeeded', output });
const failed = (code: string, message: string): StepOutcome => ({ outcome: 'failed', error: { code, message } });

/** Reserve takes stock; its compensation gives back exactly what this order reserved. */
export function inventory(options: ParticipantOptions): ConsumerFactory {
  return participant('reserve', Producers.inventory, EventTypes.inventoryResult, async (command, tx, t) => {
    const { order_id, sku, qty } = inputOf(itemInput, command);
    if (command.action === 'compensate') {
      const [held] = await tx.query<{ sku: string; qty: number }>(`DELETE FROM ${t.reservations} WHERE order_id = $1 RETURNING sku, qty`, [order_id]);
      if (held) await tx.query(`UPDATE ${t.stock} SET qty = qty + $2 WHERE sku = $1`, [held.sku, held.qty]);
      return succeeded({ released: held?.qty ?? 0 });
    }
    const taken = await tx.query(`UPDATE ${t.stock} SET qty = qty - $2 WHERE sku = $1 AND qty >= $2 RETURNING qty`, [sku, qty]);
    if (taken.length === 0) {
      const [row] = await tx.query<{ qty: number }>(`SELECT qty FROM ${t.stock} WHERE sku = $1`, [sku]);
      return failed('out_of_stock', `${row?.qty ?? 0} of ${sku} in stock, ${qty} asked`);
    }
    await tx.query(`INSERT INTO ${t.reservations} (order_id, sku, qty) VALUES ($1, $2, $3)`, [order_id, sku, qty]);
    return succeeded({ reserved: qty });
  }, options);
}

/**
 * Charge declines amounts above the limit (deterministic, so the example always compensates
 * it), and answers amounts above the review threshold `reviewMs` late.
 */
export function payment(options: ParticipantOptions): ConsumerFactory {
  const limit = options.chargeLimitCents ?? CHARGE_LIMIT_CENTS;
  const reviewAbove = options.reviewAboveCents ?? REVIEW_ABOVE_CENTS;
  const reviewMs = options.reviewMs ?? PAYMENT_REVIEW_MS;
  const underReview: AnswerDelay = (command) => {
    const amount = command.action === 'execute' ? (command.input as { amount_cents?: unknown } | null)?.amount_cents : undefined;
    return typeof amount === 'number' && amount > reviewAbove && amount <= limit ? reviewMs : undefined;
  };
  return participant('charge', Producers.payment, EventTypes.paymentResult, async (command, tx, t) => {
    const { order_id, amount_cents } = inputOf(chargeInput, command);
    if (command.action === 'compensate') {
      await tx.query(`UPDATE ${t.charges} SET refunded_cents = amount_cents, amount_cents = 0 WHERE order_id = $1`, [order_id]);
      return succeeded({ refunded: true });
    }
    if (amount_cents > limit) return failed('charge_declined', `amount ${amount_cents} exceeds the limit of ${limit} cents`);
    await tx.query(`INSERT INTO ${t.charges} (order_id, amount_cents) VALUES ($1, $2)`, [order_id, amount_cents]);
    return succeeded({ charge_id: `ch-${order_id}` });
  }, options, underReview);
}

/** Ship is the last step: it is never compensated (nothing after it can fail). */
export function shipping(options: ParticipantOptions): ConsumerFactory {
  return participant('ship', Producers.shipping, EventTypes.shippingResult, async (command, tx, t) => {
    const { order_id, sku, qty } = inputOf(itemInput, command);
    if (command.action === 'compensate') throw new Rejection('no_compensation', 'shipping has no compensation');
    const tracking = `trk-${order_id}`;
    await tx.query(`INSERT INTO ${t.shipments} (order_id, sku, qty, tracking) VALUES ($1, $2, $3, $4)`, [order_id, sku, qty, tracking]);
    return succeeded({ tracking });
  }, options);
}
