import { sql } from "drizzle-orm";
import { check, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

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
