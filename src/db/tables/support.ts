import { sql } from "drizzle-orm";
import { boolean, check, index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "../schema";

/**
 * One row per support answer, written as it is given; never the member's words or ours, only what
 * the support figures count.
 */
export const supportAnswers = pgTable(
  "support_answers",
  {
    id: text("id").primaryKey(),
    category: text("category").notNull(),
    language: text("language").notNull(),
    via: text("via").notNull(),
    escalated: boolean("escalated").notNull(),
    /** Why it escalated (escalation reasons); empty when it did not. */
    reasons: jsonb("reasons").$type<string[]>().notNull(),
    cited: boolean("cited").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("support_answers_created_idx").on(t.createdAt), check("support_answers_via_check", sql`${t.via} in ('model', 'fallback')`)],
);

/** An escalated answer becomes a ticket for support staff. */
export const supportTickets = pgTable(
  "support_tickets",
  {
    id: text("id").primaryKey(),
    answerId: text("answer_id")
      .notNull()
      .unique()
      .references(() => supportAnswers.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    category: text("category").notNull(),
    language: text("language").notNull(),
    reasons: jsonb("reasons").$type<string[]>().notNull(),
    status: text("status").notNull().default("open"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    resolvedAt: timestamp("resolved_at", { withTimezone: true, mode: "date" }),
    resolvedBy: text("resolved_by").references(() => users.id),
    /** What the resolver wrote for the next person reading the ticket; staff text, never the member's. */
    resolutionNote: text("resolution_note"),
  },
  (t) => [
    // Lists page by the row (created_at, id), with or without a status; the median time to resolve
    // reads resolved tickets by resolved_at.
    index("support_tickets_status_created_id_idx").on(t.status, t.createdAt, t.id),
    index("support_tickets_created_id_idx").on(t.createdAt, t.id),
    index("support_tickets_resolved_idx").on(t.resolvedAt).where(sql`${t.status} = 'resolved'`),
    // A member's tickets, paged by id for their export and deleted at erasure; the resolver's, tombstoned.
    index("support_tickets_user_idx").on(t.userId, t.id),
    index("support_tickets_resolved_by_idx").on(t.resolvedBy).where(sql`${t.resolvedBy} is not null`),
    check("support_tickets_status_check", sql`${t.status} in ('open', 'resolved')`),
  ],
);
