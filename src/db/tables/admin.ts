import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Every admin write: who, what, on which target, when and under which request id. Rows are
 * written in the same transaction as the write they describe, so an audited write that rolls back
 * leaves no entry and a committed one always has its entry. Never deleted; updated only to put an
 * erased member's tombstone where the entry named them (services/account/erasure.ts).
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
    /**
     * Every member id (idPattern("usr")) written anywhere in the target or the details, free text
     * included: the erasure finds the entries naming a member through its index instead of reading
     * the whole log. Postgres computes it, so no writer can leave it out and an entry rewritten to
     * a tombstone stops listing the member. Crockford's base32 has no u, so no id can begin inside
     * another; runs of other characters are skipped whole (`[^u]+`), six times faster than one
     * character at a time.
     */
    memberIds: text("member_ids")
      .array()
      .notNull()
      .generatedAlwaysAs(sql`array_remove(string_to_array(regexp_replace(target_id || ' ' || details::text, '(usr_[0-9a-hjkmnp-tv-z]{26})|[^u]+|u', '\\1 ', 'g'), ' '), '')`),
  },
  (t) => [
    check("admin_audit_credential_check", sql`${t.credential} in ('token', 'api_key')`),
    index("admin_audit_actor_idx").on(t.actorUserId, t.id),
    index("admin_audit_action_idx").on(t.action, t.id),
    index("admin_audit_target_idx").on(t.targetType, t.targetId),
    index("admin_audit_member_idx").using("gin", t.memberIds),
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
