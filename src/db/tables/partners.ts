import { sql } from "drizzle-orm";
import { bigserial, boolean, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "../schema";

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * A partner: a business a member applies for. One per member (the unique index answers the second
 * application with 409). The review decision is kept on the row (who, when, under which request).
 * The webhook secret is kept in the clear because every delivery is signed with it; the previous
 * secret signs too until `webhookPreviousSecretUntil`, so receivers can roll over.
 */
export const partners = pgTable(
  "partners",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    companyName: text("company_name").notNull(),
    contactName: text("contact_name").notNull(),
    contactEmail: text("contact_email").notNull(),
    website: text("website"),
    description: text("description").notNull(),
    businessType: text("business_type").notNull(),
    country: text("country").notNull(),
    status: text("status").notNull().default("pending_review"),
    reviewedBy: text("reviewed_by").references(() => users.id),
    reviewedAt: at("reviewed_at"),
    reviewRequestId: text("review_request_id"),
    rejectionReason: text("rejection_reason"),
    webhookUrl: text("webhook_url"),
    webhookEvents: jsonb("webhook_events").$type<string[]>().notNull().default([]),
    webhookEnabled: boolean("webhook_enabled").notNull().default(false),
    webhookSecret: text("webhook_secret"),
    webhookPreviousSecret: text("webhook_previous_secret"),
    webhookPreviousSecretUntil: at("webhook_previous_secret_until"),
    /** The first failure of the current run of failures; cleared by a success. */
    webhookFailingSince: at("webhook_failing_since"),
    /** Why the platform turned the webhook off (410 Gone, five days of failures); null otherwise. */
    webhookDisabledReason: text("webhook_disabled_reason"),
    webhookDisabledAt: at("webhook_disabled_at"),
    createdAt: at("created_at").notNull(),
    updatedAt: at("updated_at").notNull(),
  },
  (t) => [
    check("partners_status_check", sql`${t.status} in ('pending_review', 'approved', 'rejected')`),
    uniqueIndex("partners_user_idx").on(t.userId),
    index("partners_status_idx").on(t.status, t.createdAt),
  ],
);

/**
 * The outbox: everything the platform sends outward, written in the transaction of the change
 * that causes it. `id` is the message id receivers deduplicate by (`webhook-id`), the same on
 * every attempt; `body` is the exact text that is signed and sent. A worker claims due rows with
 * FOR UPDATE SKIP LOCKED and moves `next_attempt_at` ahead by a lease before sending, so a worker
 * that dies mid-send leaves the row due again once the lease ends: resent, never lost.
 */
export const outboxMessages = pgTable(
  "outbox_messages",
  {
    id: text("id").primaryKey(),
    seq: bigserial("seq", { mode: "number" }).notNull(),
    kind: text("kind").notNull(),
    channel: text("channel").notNull(),
    /** Whom the message is for, by channel: a partner id for `webhook`. */
    targetId: text("target_id").notNull(),
    body: text("body").notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: at("next_attempt_at"),
    lastAttemptAt: at("last_attempt_at"),
    lastError: text("last_error"),
    createdAt: at("created_at").notNull(),
    deliveredAt: at("delivered_at"),
  },
  (t) => [
    check("outbox_status_check", sql`${t.status} in ('pending', 'delivered', 'failed')`),
    index("outbox_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("outbox_target_idx").on(t.targetId, t.seq),
    // Settled messages by their last activity, for the retention (services/outbox/retention.ts).
    // Partial, so a message enters it once, when it settles, not on every claim while pending.
    index("outbox_settled_idx").on(sql`coalesce(${t.lastAttemptAt}, ${t.createdAt})`).where(sql`${t.status} <> 'pending'`),
    // A workflow run's hand-over by the run's id, for the erasure of the member the run was about.
    index("outbox_workflow_run_idx").on(sql`((${t.body}::jsonb)->'data'->>'runId')`).where(sql`${t.kind} = 'workflow.run'`),
  ],
);

/**
 * One row per attempt to deliver anything (a webhook call, a message a provider reported on):
 * what the admin observability aggregates and what a partner's delivery log shows. `route` is the
 * path a delivery took (a webhook's host, a provider's name).
 */
export const deliveryRecords = pgTable(
  "delivery_records",
  {
    id: text("id").primaryKey(),
    channel: text("channel").notNull(),
    route: text("route").notNull(),
    outcome: text("outcome").notNull(),
    latencyMs: integer("latency_ms"),
    statusCode: integer("status_code"),
    error: text("error"),
    /** The outbox message the attempt was for, when it came from the outbox. */
    messageId: text("message_id"),
    occurredAt: at("occurred_at").notNull(),
  },
  (t) => [
    check("delivery_records_outcome_check", sql`${t.outcome} in ('sent', 'delivered', 'failed')`),
    index("delivery_records_window_idx").on(t.occurredAt, t.channel),
    index("delivery_records_message_idx").on(t.messageId, t.occurredAt),
  ],
);
