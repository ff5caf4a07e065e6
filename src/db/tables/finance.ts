import { bigint, date, index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { plans } from "../schema";

/**
 * One row per subscription payment, written in the ledger transaction that charges it: the
 * ledger says how many coins moved, this says for which plan, so revenue per plan is a sum over
 * an index instead of a parse of the transaction's note. Never updated or deleted.
 */
export const subscriptionCharges = pgTable(
  "subscription_charges",
  {
    /** The ledger transaction of the charge. */
    transactionId: text("transaction_id").primaryKey(),
    userId: text("user_id").notNull(),
    planId: text("plan_id")
      .notNull()
      .references(() => plans.id),
    coins: bigint("coins", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    /** The key of the workflow runs this charge starts (a run names its event by a number). */
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
  },
  (t) => [index("subscription_charges_created_idx").on(t.createdAt), index("subscription_charges_user_idx").on(t.userId, t.transactionId)],
);

/**
 * Finance metrics' daily rollup of the ledger: per closed UTC day and transaction type, the sums
 * the metrics read. Derived data, rebuilt whenever the day's count of ledger transactions no
 * longer matches `transactions` (the ledger only grows, so an equal count is the same set).
 */
export const financeLedgerDays = pgTable(
  "finance_ledger_days",
  {
    day: date("day", { mode: "string" }).notNull(),
    type: text("type").notNull(),
    transactions: bigint("transactions", { mode: "number" }).notNull(),
    minted: bigint("minted", { mode: "number" }).notNull(),
    revenue: bigint("revenue", { mode: "number" }).notNull(),
    credited: bigint("credited", { mode: "number" }).notNull(),
    unbalanced: bigint("unbalanced", { mode: "number" }).notNull(),
    computedAt: timestamp("computed_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.type] })],
);
