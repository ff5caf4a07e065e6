import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Every admin write: who, what, on which target, when and under which request id. Rows are
 * written in the same transaction as the write they describe, so an audited write that rolls back
 * leaves no entry and a committed one always has its entry. Never updated or deleted.
 */
export const adminAuditLog = pgTable(
  "admin_audit_log",
  {
    /** `aud_<ulid>`: sorts by time, so pages are ordered and cursored by id alone. */
    id: text("id").primaryKey(),
    actorUserId: text("actor_user_id").notNull(),
    /** `token` or `api_key`; with a key, `api_key_id` names it. */
    credential: text("credential").notNull(),
    apiKeyId: text("api_key_id"),
    /** `<area>.<verb>`, e.g. `kb.replace`, `voucher_batch.create`. */
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    requestId: text("request_id").notNull(),
    /** What changed, without secrets (a voucher's code or an API key is never written here). */
    details: jsonb("details").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    check("admin_audit_credential_check", sql`${t.credential} in ('token', 'api_key')`),
    index("admin_audit_actor_idx").on(t.actorUserId, t.id),
    index("admin_audit_action_idx").on(t.action, t.id),
    index("admin_audit_target_idx").on(t.targetType, t.targetId),
  ],
);

/**
 * Small settings documents admins replace as a whole (the maps rollout's enabled regions). The
 * version moves by one on every write and is the document's ETag, so a write naming an older
 * version is refused instead of overwriting someone else's.
 */
export const configDocuments = pgTable("config_documents", {
  name: text("name").primaryKey(),
  value: jsonb("value").notNull(),
  version: integer("version").notNull(),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
});
