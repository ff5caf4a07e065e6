import { sql } from "drizzle-orm";
import { bigserial, check, index, jsonb, pgTable, smallint, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "../schema";

/**
 * Requests for a video call with human support, served in queue order: highest priority first,
 * then arrival (`seq`, assigned under the queue lock, so it is the commit order too). One waiting
 * request per person.
 */
export const supportVideoRequests = pgTable(
  "support_video_requests",
  {
    id: text("id").primaryKey(),
    seq: bigserial("seq", { mode: "number" }).notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    reason: text("reason").notNull(),
    priority: text("priority").notNull(),
    /** low 0 … urgent 3, so the queue order is one index scan. */
    priorityRank: smallint("priority_rank").notNull(),
    platform: text("platform").notNull(),
    language: text("language").notNull(),
    /** [{from, to}] ISO instants the person can take the call. */
    callbackTimes: jsonb("callback_times").notNull(),
    timezone: text("timezone").notNull(),
    status: text("status").notNull().default("waiting"),
    /** Filed by support staff on the person's behalf; null when the person filed it. */
    filedBy: text("filed_by").references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    check("support_video_priority_check", sql`${t.priority} in ('low', 'normal', 'high', 'urgent')`),
    check("support_video_status_check", sql`${t.status} in ('waiting', 'in_call', 'done', 'cancelled')`),
    uniqueIndex("support_video_seq_idx").on(t.seq),
    uniqueIndex("support_video_one_waiting_idx").on(t.userId).where(sql`${t.status} = 'waiting'`),
    index("support_video_queue_idx").on(t.priorityRank.desc(), t.seq).where(sql`${t.status} = 'waiting'`),
    // A member's requests of any status, paged by id for their export and deleted at erasure (the
    // unique index above holds only waiting ones); those staff filed, tombstoned.
    index("support_video_user_idx").on(t.userId, t.id),
    index("support_video_filed_by_idx").on(t.filedBy).where(sql`${t.filedBy} is not null`),
  ],
);
