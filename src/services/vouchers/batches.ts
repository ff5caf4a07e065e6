import { and, desc, eq, lt, sql } from "drizzle-orm";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { voucherBatches, vouchers } from "../../db/tables/vouchers";
import { ApiError } from "../../errors";
import type { IdGenerator, Random } from "../../platform/ids";
import { recordAudit } from "../audit/log";
import { canonicalCode, codeHash, newVoucherCode } from "./codes";

export interface VoucherAdminContext {
  db: Db;
  ids: IdGenerator;
  random: Random;
  now: number;
  requestId: string;
}

/** What every view of a batch shows. */
interface BatchFields {
  batchId: string;
  coins: number;
  count: number;
  note: string | null;
  expiresAt: string | null;
  createdAt: string;
}

export interface CreatedBatch extends BatchFields {
  /** Shown only in this answer: only hashes are stored. */
  codes: { voucherId: string; code: string }[];
}

const LAST_EXPIRY_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export async function createBatch(ctx: VoucherAdminContext, actor: Principal, input: { coins: number; count: number; expiresAt?: string; note?: string }): Promise<CreatedBatch> {
  assertAdmin(actor);
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
  if (expiresAt && (expiresAt.getTime() <= ctx.now || expiresAt.getTime() > LAST_EXPIRY_MS)) {
    throw new ApiError("invalid_input", "expiresAt must be in the future and before the year 10000", { details: [{ path: "expiresAt", message: "must be in the future" }] });
  }
  const at = new Date(ctx.now);
  const batchId = ctx.ids.next("vbt");
  const codes = Array.from({ length: input.count }, () => ({ voucherId: ctx.ids.next("vch"), code: newVoucherCode(ctx.random) }));
  const rows = await Promise.all(
    codes.map(async ({ voucherId, code }) => ({
      id: voucherId,
      batchId,
      codeHash: await codeHash(canonicalCode(code)!),
      hint: code.slice(-4),
      coins: input.coins,
      expiresAt,
    })),
  );
  await ctx.db.transaction(async (tx) => {
    await tx.insert(voucherBatches).values({ id: batchId, coins: input.coins, count: input.count, note: input.note ?? null, expiresAt, createdBy: actor.userId, createdAt: at });
    await tx.insert(vouchers).values(rows);
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, {
      action: "voucher_batch.create",
      targetType: "voucher_batch",
      targetId: batchId,
      details: { coins: input.coins, count: input.count, expiresAt: expiresAt?.toISOString() ?? null, note: input.note ?? null },
    });
  });
  return { batchId, coins: input.coins, count: input.count, note: input.note ?? null, expiresAt: expiresAt?.toISOString() ?? null, createdAt: at.toISOString(), codes };
}

export interface BatchInventory extends BatchFields {
  createdBy: string;
  revokedAt: string | null;
  byStatus: { active: number; redeemed: number; expired: number; revoked: number };
  /** Coins still claimable: active, unexpired codes times the value. */
  coinsOutstanding: number;
  coinsRedeemed: number;
}

/** Batches newest first with counts by status, one grouped query over the batch index. */
export async function listBatches(ctx: Pick<VoucherAdminContext, "db" | "now">, actor: Principal, page: { limit: number; cursor?: string }): Promise<{ batches: BatchInventory[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const batches = await ctx.db
    .select()
    .from(voucherBatches)
    .where(page.cursor === undefined ? undefined : lt(voucherBatches.id, page.cursor))
    .orderBy(desc(voucherBatches.id))
    .limit(page.limit + 1);
  const shown = batches.slice(0, page.limit);
  const now = new Date(ctx.now);
  const counts =
    shown.length === 0
      ? []
      : await queryRows<{ batch_id: string; active: string; redeemed: string; expired: string; revoked: string }>(
          ctx.db,
          sql`select batch_id,
                count(*) filter (where status = 'active' and (expires_at is null or expires_at > ${now}))::text as active,
                count(*) filter (where status = 'redeemed')::text as redeemed,
                count(*) filter (where status = 'active' and expires_at <= ${now})::text as expired,
                count(*) filter (where status = 'revoked')::text as revoked
              from vouchers where batch_id in (${sql.join(
                shown.map((b) => sql`${b.id}`),
                sql`, `,
              )})
              group by batch_id`,
        );
  const byBatch = new Map(counts.map((c) => [c.batch_id, c]));
  return {
    batches: shown.map((b) => {
      const c = byBatch.get(b.id);
      const byStatus = { active: Number(c?.active ?? 0), redeemed: Number(c?.redeemed ?? 0), expired: Number(c?.expired ?? 0), revoked: Number(c?.revoked ?? 0) };
      return {
        batchId: b.id,
        coins: b.coins,
        count: b.count,
        note: b.note,
        expiresAt: b.expiresAt?.toISOString() ?? null,
        createdAt: b.createdAt.toISOString(),
        createdBy: b.createdBy,
        revokedAt: b.revokedAt?.toISOString() ?? null,
        byStatus,
        coinsOutstanding: byStatus.active * b.coins,
        coinsRedeemed: byStatus.redeemed * b.coins,
      };
    }),
    nextCursor: batches.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null,
  };
}

/** Revokes every code of the batch not yet redeemed; redeemed codes stay redeemed. */
export async function revokeBatch(ctx: VoucherAdminContext, actor: Principal, batchId: string): Promise<{ batchId: string; revokedCodes: number }> {
  assertAdmin(actor);
  const at = new Date(ctx.now);
  return ctx.db.transaction(async (tx) => {
    const [batch] = await tx.update(voucherBatches).set({ revokedAt: at }).where(eq(voucherBatches.id, batchId)).returning({ id: voucherBatches.id });
    if (!batch) throw new ApiError("not_found", "no such voucher batch");
    const revoked = await tx
      .update(vouchers)
      .set({ status: "revoked", revokedAt: at })
      .where(and(eq(vouchers.batchId, batchId), eq(vouchers.status, "active")))
      .returning({ id: vouchers.id });
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, { action: "voucher_batch.revoke", targetType: "voucher_batch", targetId: batchId, details: { revokedCodes: revoked.length } });
    return { batchId, revokedCodes: revoked.length };
  });
}

/** Revokes one code, by its id; a redeemed code cannot be revoked (409). */
export async function revokeVoucher(ctx: VoucherAdminContext, actor: Principal, voucherId: string): Promise<{ voucherId: string; status: "revoked" }> {
  assertAdmin(actor);
  const at = new Date(ctx.now);
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx.select({ status: vouchers.status, batchId: vouchers.batchId }).from(vouchers).where(eq(vouchers.id, voucherId)).for("update");
    if (!row) throw new ApiError("not_found", "no such voucher");
    if (row.status === "redeemed") throw new ApiError("conflict", "the voucher was already redeemed");
    if (row.status === "active") await tx.update(vouchers).set({ status: "revoked", revokedAt: at }).where(eq(vouchers.id, voucherId));
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, at, { action: "voucher.revoke", targetType: "voucher", targetId: voucherId, details: { batchId: row.batchId, wasRevoked: row.status === "revoked" } });
    return { voucherId, status: "revoked" as const };
  });
}
