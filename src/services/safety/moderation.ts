import { and, desc, eq, sql } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import { PG, pgError } from "../../db/errors";
import type { Db } from "../../db/port";
import { blocks, profiles, reports, users } from "../../db/schema";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import type { Tx } from "../wallet/ledger";

export const REPORT_REASONS = ["spam", "harassment", "fake_profile", "underage", "inappropriate_content", "other"] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

export interface ModerationContext {
  db: Db;
  ids: IdGenerator;
  now: number;
}

export interface BlockEntry {
  userId: string;
  displayName: string | null;
  createdAt: string;
}

function notYourself(actor: Principal, targetId: string, action: string): void {
  if (actor.userId === targetId) throw new ApiError("invalid_input", `cannot ${action} yourself`, { details: [{ path: "userId", message: "must be someone else" }] });
}

/** Inserts the caller's block of the target unless it exists; an unknown target answers 404. */
async function insertBlock(db: Db | Tx, blockerId: string, blockedId: string, at: Date): Promise<{ created: boolean; createdAt: Date }> {
  let inserted: { createdAt: Date }[];
  try {
    inserted = await (db as Db)
      .insert(blocks)
      .values({ blockerId, blockedId, createdAt: at })
      .onConflictDoNothing()
      .returning({ createdAt: blocks.createdAt });
  } catch (err) {
    if (pgError(err).code === PG.foreignKeyViolation) throw new ApiError("not_found", "no such user");
    throw err;
  }
  if (inserted[0]) return { created: true, createdAt: inserted[0].createdAt };
  const [existing] = await (db as Db)
    .select({ createdAt: blocks.createdAt })
    .from(blocks)
    .where(and(eq(blocks.blockerId, blockerId), eq(blocks.blockedId, blockedId)))
    .limit(1);
  // Unblocked between the two statements: the block the caller asked for is gone, so write it again.
  if (!existing) return insertBlock(db, blockerId, blockedId, at);
  return { created: false, createdAt: existing.createdAt };
}

/** Blocks another person; blocking them again is not an error and keeps the first block's time. */
export async function blockUser(ctx: ModerationContext, actor: Principal, targetId: string): Promise<{ created: boolean; block: { userId: string; blocked: true; createdAt: string } }> {
  notYourself(actor, targetId, "block");
  const result = await insertBlock(ctx.db, actor.userId, targetId, new Date(ctx.now));
  return { created: result.created, block: { userId: targetId, blocked: true, createdAt: result.createdAt.toISOString() } };
}

/** Removes the caller's own block of the target; someone else's block is never touched. */
export async function unblockUser(ctx: ModerationContext, actor: Principal, targetId: string): Promise<void> {
  const removed = await ctx.db
    .delete(blocks)
    .where(and(eq(blocks.blockerId, actor.userId), eq(blocks.blockedId, targetId)))
    .returning({ blockedId: blocks.blockedId });
  if (removed.length === 0) throw new ApiError("not_found", "no such block");
}

/** The people the caller blocked, newest first. */
export async function listBlocks(ctx: ModerationContext, actor: Principal): Promise<BlockEntry[]> {
  const rows = await ctx.db
    .select({
      userId: blocks.blockedId,
      displayName: sql<string | null>`coalesce(${profiles.displayName}, ${users.displayName})`,
      createdAt: blocks.createdAt,
    })
    .from(blocks)
    .innerJoin(users, eq(users.id, blocks.blockedId))
    .leftJoin(profiles, eq(profiles.userId, blocks.blockedId))
    .where(eq(blocks.blockerId, actor.userId))
    .orderBy(desc(blocks.createdAt), blocks.blockedId);
  return rows.map((r) => ({ userId: r.userId, displayName: r.displayName, createdAt: r.createdAt.toISOString() }));
}

export interface ReportResult {
  reportId: string;
  reason: ReportReason;
  blocked: true;
}

/** Files a report for moderators and blocks the reported person, in one transaction. */
export async function reportUser(ctx: ModerationContext, actor: Principal, input: { userId: string; reason: ReportReason; details?: string }): Promise<ReportResult> {
  notYourself(actor, input.userId, "report");
  const reportId = ctx.ids.next("rep");
  const at = new Date(ctx.now);
  return ctx.db.transaction(async (tx) => {
    try {
      await tx.insert(reports).values({ id: reportId, reporterId: actor.userId, reportedId: input.userId, reason: input.reason, details: input.details ?? null, createdAt: at });
    } catch (err) {
      if (pgError(err).code === PG.foreignKeyViolation) throw new ApiError("not_found", "no such user");
      throw err;
    }
    await insertBlock(tx, actor.userId, input.userId, at);
    return { reportId, reason: input.reason, blocked: true as const };
  });
}
