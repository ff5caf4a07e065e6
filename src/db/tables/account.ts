import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "../schema";

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * A member's request for a copy of their data. The document is built in the background (claimed
 * with a lease, so a builder that died leaves it to the next) and kept here as JSON text, which
 * Postgres compresses on its own (TOAST). Only the SHA-256 of the download token is stored; the
 * document is dropped once downloaded or expired, the row stays for the daily limit and history.
 */
export const accountExports = pgTable(
  "account_exports",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    /** pending → running → ready → expired (downloaded or past `expires_at`); failed after MAX_ATTEMPTS. */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    leaseUntil: at("lease_until"),
    lastError: text("last_error"),
    document: text("document"),
    byteSize: integer("byte_size"),
    tokenHash: text("token_hash"),
    createdAt: at("created_at").notNull(),
    startedAt: at("started_at"),
    readyAt: at("ready_at"),
    /** The end of the download window: ready_at + 24 h. */
    expiresAt: at("expires_at"),
    downloadedAt: at("downloaded_at"),
  },
  (t) => [
    check("account_exports_status_check", sql`${t.status} in ('pending', 'running', 'ready', 'failed', 'expired')`),
    index("account_exports_user_idx").on(t.userId, t.createdAt),
    index("account_exports_open_idx").on(t.createdAt).where(sql`${t.status} in ('pending', 'running')`),
    uniqueIndex("account_exports_token_idx").on(t.tokenHash),
  ],
);
