import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { supportTickets } from "../../db/tables/support";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import { decodeTimeCursor, encodeTimeCursor } from "../../platform/time-cursor";
import { recordAudit, type AuditStamp } from "../audit/log";

export const TICKET_STATUSES = ["open", "resolved"] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** A ticket as staff see it: what the answer record keeps, never the member's words. */
export interface SupportTicket {
  ticketId: string;
  answerId: string;
  userId: string;
  category: string;
  language: string;
  reasons: string[];
  status: TicketStatus;
  createdAt: string;
  resolvedAt: string | null;
  resolvedBy: string | null;
  resolutionNote: string | null;
}

export interface TicketQuery {
  limit: number;
  /** The `nextCursor` of the previous page: tickets older than it. */
  cursor?: string;
  status?: TicketStatus;
  category?: string;
  language?: string;
}

type Row = typeof supportTickets.$inferSelect;

const ticketOf = (r: Row): SupportTicket => ({
  ticketId: r.id,
  answerId: r.answerId,
  userId: r.userId,
  category: r.category,
  language: r.language,
  reasons: r.reasons,
  status: r.status as TicketStatus,
  createdAt: r.createdAt.toISOString(),
  resolvedAt: r.resolvedAt?.toISOString() ?? null,
  resolvedBy: r.resolvedBy,
  resolutionNote: r.resolutionNote,
});

/** Newest first, a page at a time, keyed on (created_at, id) like the other time-ordered lists. */
export async function listTickets(db: Db, actor: Principal, q: TicketQuery): Promise<{ tickets: SupportTicket[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const t = supportTickets;
  const filters: SQL[] = [];
  if (q.cursor !== undefined) {
    const after = decodeTimeCursor(q.cursor);
    // A row comparison is one index range; the equivalent or/and form makes Postgres read and
    // filter every ticket newer than the cursor.
    filters.push(sql`(${t.createdAt}, ${t.id}) < (${after.at.toISOString()}::timestamptz, ${after.id})`);
  }
  if (q.status !== undefined) filters.push(eq(t.status, q.status));
  if (q.category !== undefined) filters.push(eq(t.category, q.category));
  if (q.language !== undefined) filters.push(eq(t.language, q.language));
  const rows = await db
    .select()
    .from(t)
    .where(filters.length ? and(...filters) : undefined)
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { tickets: page.map(ticketOf), nextCursor: rows.length > q.limit && last ? encodeTimeCursor(last.createdAt, last.id) : null };
}

export interface ResolveContext {
  db: Db;
  ids: IdGenerator;
  now: number;
  requestId: string;
}

/**
 * Marks an open ticket resolved, with the audit entry in the same transaction. Resolving a
 * resolved ticket is a 409 rather than a quiet success: two staff working one ticket learn that
 * someone else closed it, and the first resolver's note is never overwritten.
 */
export async function resolveTicket(ctx: ResolveContext, actor: Principal, ticketId: string, note?: string): Promise<SupportTicket> {
  assertAdmin(actor);
  const stamp: AuditStamp = { actor, requestId: ctx.requestId };
  const at = new Date(ctx.now);
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(supportTickets)
      .set({ status: "resolved", resolvedAt: at, resolvedBy: actor.userId, resolutionNote: note ?? null })
      .where(and(eq(supportTickets.id, ticketId), eq(supportTickets.status, "open")))
      .returning();
    if (!row) {
      const [existing] = await tx.select({ resolvedAt: supportTickets.resolvedAt }).from(supportTickets).where(eq(supportTickets.id, ticketId));
      if (!existing) throw new ApiError("not_found", "no such ticket");
      throw new ApiError("conflict", `ticket already resolved at ${existing.resolvedAt?.toISOString() ?? "an unknown time"}`);
    }
    await recordAudit(tx, ctx.ids, stamp, at, {
      action: "support_ticket.resolve",
      targetType: "support_ticket",
      targetId: row.id,
      details: { category: row.category, language: row.language, note: note ?? null },
    });
    return ticketOf(row);
  });
}
