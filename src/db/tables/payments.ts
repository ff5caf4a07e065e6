import { sql } from "drizzle-orm";
import { bigint, check, index, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "../schema";

/**
 * Money coming in from outside: wallet-funding requests (card-a), card-collection payments
 * (card-b), crypto payments and mobile-money requests, one row each, told apart by `provider` and
 * by the prefix of their id. `coins` is fixed when the payment is created; completing it credits
 * exactly that, once (the ledger transaction's external_ref is the payment id).
 */
export const payments = pgTable(
  "payments",
  {
    id: text("id").primaryKey(),
    provider: text("provider").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    status: text("status").notNull(),
    /** What the payer was asked for, in `currency` (card-a: cents; crypto: the coin amount to send). */
    amount: numeric("amount", { precision: 30, scale: 10, mode: "number" }).notNull(),
    currency: text("currency").notNull(),
    coins: bigint("coins", { mode: "number" }).notNull(),
    /** The provider's id of the checkout, transaction, payment or STK request, once known. */
    providerRef: text("provider_ref"),
    /** Mobile money: the secret part of the callback URL. */
    callbackToken: text("callback_token"),
    /**
     * The Idempotency-Key of the request that created it, while that request may have reached the
     * provider: a retry that takes the key over finds the payment here instead of asking again.
     */
    idempotencyKey: text("idempotency_key"),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    failureReason: text("failure_reason"),
    ledgerTransactionId: text("ledger_transaction_id"),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
    /**
     * When reconciliation last took it to ask its provider. Each pass takes the least recently
     * asked first, so a backlog larger than one pass is worked through instead of re-read.
     */
    reconciledAt: timestamp("reconciled_at", { withTimezone: true, mode: "date" }),
    /**
     * Money a person must deal with, one `kind: note` line per case ("; " between them): taken but
     * not credited, taken twice, or refunded or charged back after the credit. Credits are never
     * reversed automatically, so this is where such cases wait; null when there is none.
     */
    reviewReason: text("review_reason"),
    /** When the latest review line was added. */
    reviewFlaggedAt: timestamp("review_flagged_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    check("payments_provider_check", sql`${t.provider} in ('card-a', 'card-b', 'crypto', 'mobile-money')`),
    check("payments_status_check", sql`${t.status} in ('pending', 'completed', 'failed', 'expired')`),
    check("payments_coins_positive", sql`${t.coins} > 0`),
    // A completed payment always names the ledger transaction that credited it.
    check("payments_completed_credited", sql`(${t.status} = 'completed') = (${t.ledgerTransactionId} is not null)`),
    uniqueIndex("payments_provider_ref_idx").on(t.provider, t.providerRef),
    uniqueIndex("payments_callback_token_idx").on(t.callbackToken),
    uniqueIndex("payments_idempotency_key_idx").on(t.userId, t.idempotencyKey),
    uniqueIndex("payments_ledger_transaction_idx").on(t.ledgerTransactionId),
    index("payments_user_idx").on(t.userId, t.createdAt),
    index("payments_pending_idx").on(t.createdAt).where(sql`${t.status} = 'pending'`),
    // Reconciliation also asks about failed and expired payments of the providers it can ask (money may still arrive for them).
    index("payments_recheck_idx").on(t.createdAt).where(sql`${t.status} in ('failed', 'expired') and ${t.provider} <> 'card-a'`),
    // Finance metrics: payments made in a window (by status) and payments completed in a window.
    index("payments_created_idx").on(t.createdAt),
    index("payments_completed_idx").on(t.completedAt).where(sql`${t.status} = 'completed'`),
    index("payments_review_idx").on(t.reviewFlaggedAt).where(sql`${t.reviewReason} is not null`),
  ],
);

/**
 * Every provider event we acted on, by the provider's own id, written in the same transaction as
 * its effect: a replay or a concurrent duplicate meets the primary key and does nothing.
 */
export const paymentEvents = pgTable(
  "payment_events",
  {
    provider: text("provider").notNull(),
    eventId: text("event_id").notNull(),
    paymentId: text("payment_id").references(() => payments.id),
    kind: text("kind").notNull(),
    outcome: text("outcome").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] }), index("payment_events_payment_idx").on(t.paymentId)],
);
