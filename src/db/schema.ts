import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * A person on the platform. `subject` is the identity provider's `sub`; the row is created on
 * the first authenticated request.
 */
export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    subject: text("subject").notNull().unique(),
    email: text("email"),
    role: text("role").notNull().default("user"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [check("users_role_check", sql`${t.role} in ('user', 'admin')`), index("users_created_at_idx").on(t.createdAt)],
);

/**
 * Admin API keys. Only the SHA-256 of a key is stored (lookups are by hash through the unique
 * index, so no comparison of secrets happens in our code); `prefix` lets admins tell keys apart.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    name: text("name"),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("api_keys_created_by_idx").on(t.createdBy)],
);

/** The latest heartbeat of each VM agent; older ones are not kept. */
export const vmHeartbeats = pgTable("vm_heartbeats", {
  vmId: text("vm_id").primaryKey(),
  payload: jsonb("payload").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull(),
});
