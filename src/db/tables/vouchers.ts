import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "../schema";

/** A batch of voucher codes an admin created at once: same value, same expiry. */
export const voucherBatches = pgTable(
  "voucher_batches",
  {
    id: text("id").primaryKey(),
    coins: integer("coins").notNull(),
    count: integer("count").notNull(),
    note: text("note"),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [check("voucher_batches_coins_check", sql`${t.coins} > 0`), index("voucher_batches_created_idx").on(t.createdAt)],
);

/**
 * One code. Only its SHA-256 is stored (looked up through the unique index, like API keys); `hint`
 * is its last four characters so support can tell codes apart. Value and expiry are copied from
 * the batch so a redemption is one conditional update of this row. `expired` is not a stored
 * status: it is an active code past `expires_at`.
 */
export const vouchers = pgTable(
  "vouchers",
  {
    id: text("id").primaryKey(),
    batchId: text("batch_id")
      .notNull()
      .references(() => voucherBatches.id),
    codeHash: text("code_hash").notNull().unique(),
    hint: text("hint").notNull(),
    coins: integer("coins").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    status: text("status").notNull().default("active"),
    redeemedBy: text("redeemed_by").references(() => users.id),
    redeemedAt: timestamp("redeemed_at", { withTimezone: true, mode: "date" }),
    /** The ledger transaction that credited the code: at most one, by the status guard. */
    ledgerTransactionId: text("ledger_transaction_id").unique(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    check("vouchers_status_check", sql`${t.status} in ('active', 'redeemed', 'revoked')`),
    check("vouchers_redeemed_check", sql`(${t.status} = 'redeemed') = (${t.redeemedBy} is not null and ${t.ledgerTransactionId} is not null)`),
    index("vouchers_batch_status_idx").on(t.batchId, t.status),
    // A member's redemptions, paged by id for their export and tombstoned at erasure. Codes not
    // redeemed are most of the table and stay out of it, so creating a batch writes no entry here.
    index("vouchers_redeemed_by_idx").on(t.redeemedBy, t.id).where(sql`${t.redeemedBy} is not null`),
  ],
);
