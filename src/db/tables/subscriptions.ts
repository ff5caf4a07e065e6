import { bigint, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";
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
  },
  (t) => [index("subscription_charges_created_idx").on(t.createdAt)],
);
