import { withOutbox } from "../outbox/dispatch";
import { and, asc, desc, eq, inArray, lt } from "drizzle-orm";
import { deliveryRecords, outboxMessages, partners } from "../../db/tables/partners";
import { ApiError } from "../../errors";
import type { Principal } from "../../auth/principal";
import type { PartnerContext } from "./profile";

export interface DeliveryAttempt {
  at: string;
  outcome: "delivered" | "failed";
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
}

export interface DeliveryView {
  deliveryId: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  createdAt: string;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
  lastError: string | null;
  attempts: DeliveryAttempt[];
}

async function partnerIdOf(ctx: PartnerContext, actor: Principal): Promise<string> {
  const [row] = await ctx.db.select({ id: partners.id }).from(partners).where(eq(partners.userId, actor.userId));
  if (!row) throw new ApiError("not_found", "you have not applied as a partner");
  return row.id;
}

const badCursor = () => new ApiError("invalid_input", "invalid cursor", { details: [{ path: "cursor", message: "not a cursor this list returned" }] });

/** The caller's own deliveries, newest first, each with its attempts (oldest first). */
export async function listDeliveries(ctx: PartnerContext, actor: Principal, query: { limit: number; cursor?: string }): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
  const partnerId = await partnerIdOf(ctx, actor);
  let before: number | undefined;
  if (query.cursor !== undefined) {
    if (!/^[0-9]{1,15}$/.test(query.cursor)) throw badCursor();
    before = Number(query.cursor);
  }
  const rows = await ctx.db
    .select()
    .from(outboxMessages)
    .where(and(eq(outboxMessages.targetId, partnerId), eq(outboxMessages.channel, "webhook"), before !== undefined ? lt(outboxMessages.seq, before) : undefined))
    .orderBy(desc(outboxMessages.seq))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const attempts = page.length
    ? await ctx.db
        .select()
        .from(deliveryRecords)
        .where(inArray(deliveryRecords.messageId, page.map((r) => r.id)))
        .orderBy(asc(deliveryRecords.occurredAt), asc(deliveryRecords.id))
    : [];
  const byMessage = new Map<string, DeliveryAttempt[]>();
  for (const a of attempts) {
    const list = byMessage.get(a.messageId ?? "") ?? [];
    list.push({ at: a.occurredAt.toISOString(), outcome: a.outcome as DeliveryAttempt["outcome"], statusCode: a.statusCode, latencyMs: a.latencyMs, error: a.error });
    byMessage.set(a.messageId ?? "", list);
  }
  const last = page.at(-1);
  return {
    deliveries: page.map((r) => ({
      deliveryId: r.id,
      event: r.kind,
      status: r.status as DeliveryView["status"],
      createdAt: r.createdAt.toISOString(),
      deliveredAt: r.deliveredAt?.toISOString() ?? null,
      nextAttemptAt: r.status === "pending" ? (r.nextAttemptAt?.toISOString() ?? null) : null,
      lastError: r.lastError,
      attempts: byMessage.get(r.id) ?? [],
    })),
    nextCursor: rows.length > query.limit && last ? String(last.seq) : null,
  };
}

/**
 * Sends a delivery again, now, under the same `webhook-id` (receivers deduplicate by it) with a
 * fresh retry schedule. Another partner's delivery is 404.
 */
export async function replayDelivery(ctx: PartnerContext, actor: Principal, deliveryId: string): Promise<{ deliveryId: string; status: "pending"; nextAttemptAt: string }> {
  const partnerId = await partnerIdOf(ctx, actor);
  return withOutbox(ctx, async (tx, queued) => {
    const [row] = await tx
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.id, deliveryId), eq(outboxMessages.targetId, partnerId), eq(outboxMessages.channel, "webhook")))
      .for("update");
    if (!row) throw new ApiError("not_found", "no such delivery");
    const [partner] = await tx.select({ enabled: partners.webhookEnabled, url: partners.webhookUrl }).from(partners).where(eq(partners.id, partnerId));
    if (!partner?.url || !partner.enabled) throw new ApiError("conflict", "the webhook is disabled; enable it first");
    const at = new Date(ctx.now);
    await tx.update(outboxMessages).set({ status: "pending", attempts: 0, nextAttemptAt: at }).where(eq(outboxMessages.id, row.id));
    queued.push(row.id);
    return { deliveryId: row.id, status: "pending" as const, nextAttemptAt: at.toISOString() };
  });
}
