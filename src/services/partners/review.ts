import { and, desc, eq, lt, or } from "drizzle-orm";
import { partners } from "../../db/tables/partners";
import { ApiError } from "../../errors";
import { assertAdmin, type Principal } from "../../auth/principal";
import { recordAudit } from "../audit/log";
import { withOutbox } from "../outbox/dispatch";
import { enqueueForPartner, nonNull, profileOf, type PartnerContext, type PartnerProfile } from "./profile";

export type PartnerStatus = "pending_review" | "approved" | "rejected";

export interface ReviewQueue {
  partners: (PartnerProfile & { reviewedBy: string | null })[];
  nextCursor: string | null;
}

const cursorOf = (createdAt: Date, id: string) => btoa(`${createdAt.toISOString()}|${id}`).replace(/=+$/, "");

function parseCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = atob(cursor).split("|");
    const createdAt = new Date(at ?? "");
    if (!id || Number.isNaN(createdAt.getTime())) throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw new ApiError("invalid_input", "invalid cursor", { details: [{ path: "cursor", message: "not a cursor this list returned" }] });
  }
}

/** Applications, newest first, optionally of one status; the webhook secret never appears. */
export async function listPartners(ctx: PartnerContext, actor: Principal, query: { status?: PartnerStatus; limit: number; cursor?: string }): Promise<ReviewQueue> {
  assertAdmin(actor);
  const after = query.cursor ? parseCursor(query.cursor) : undefined;
  const rows = await ctx.db
    .select()
    .from(partners)
    .where(
      and(
        query.status ? eq(partners.status, query.status) : undefined,
        after ? or(lt(partners.createdAt, after.createdAt), and(eq(partners.createdAt, after.createdAt), lt(partners.id, after.id))) : undefined,
      ),
    )
    .orderBy(desc(partners.createdAt), desc(partners.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    partners: page.map((r) => ({ ...profileOf(r), reviewedBy: r.reviewedBy })),
    nextCursor: rows.length > query.limit && last ? cursorOf(last.createdAt, last.id) : null,
  };
}

/**
 * Records an admin's decision on an application still in review, with who, when and under which
 * request, writes the admin audit entry and queues the decision to the partner, all in one
 * transaction. A decided application is not decided again (409).
 */
export async function reviewPartner(ctx: PartnerContext, actor: Principal, partnerId: string, decision: { approve: true } | { approve: false; reason: string }): Promise<PartnerProfile> {
  assertAdmin(actor);
  return withOutbox(ctx, async (tx, queued) => {
    const [row] = await tx.select().from(partners).where(eq(partners.id, partnerId)).for("update");
    if (!row) throw new ApiError("not_found", "no such partner");
    if (row.status !== "pending_review") throw new ApiError("conflict", `the application was already ${row.status}`);
    const at = new Date(ctx.now);
    const [updated] = await tx
      .update(partners)
      .set({
        status: decision.approve ? "approved" : "rejected",
        rejectionReason: decision.approve ? null : decision.reason,
        reviewedBy: actor.userId,
        reviewedAt: at,
        reviewRequestId: ctx.requestId,
        updatedAt: at,
      })
      .where(eq(partners.id, row.id))
      .returning();
    if (!updated) throw new Error("partner row vanished under its lock");
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, {
      action: decision.approve ? "partner.approve" : "partner.reject",
      targetType: "partner",
      targetId: updated.id,
      details: decision.approve ? { companyName: updated.companyName } : { companyName: updated.companyName, reason: decision.reason },
    });
    const reviewedAt = at.toISOString();
    if (decision.approve) {
      queued.push(...nonNull(await enqueueForPartner(tx, ctx, updated, { kind: "partner.application.approved", data: { partnerId: updated.id, status: "approved", reviewedAt } })));
    } else {
      queued.push(...nonNull(await enqueueForPartner(tx, ctx, updated, { kind: "partner.application.rejected", data: { partnerId: updated.id, status: "rejected", reason: decision.reason, reviewedAt } })));
    }
    return profileOf(updated);
  });
}
