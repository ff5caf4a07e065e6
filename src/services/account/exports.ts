import { and, eq, sql } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { accountExports } from "../../db/tables/account";
import { ApiError } from "../../errors";
import { sha256Hex, toHex } from "../../platform/hash";
import type { IdGenerator, Random } from "../../platform/ids";
import { DAY_MS } from "../../platform/clock";

/** Export requests a member may make in any 24 hours. */
export const EXPORTS_PER_DAY = 3;
/** How long a ready export can be downloaded. */
export const DOWNLOAD_WINDOW_MS = DAY_MS;

export type ExportStatus = "pending" | "running" | "ready" | "failed" | "expired";

export interface ExportView {
  exportId: string;
  status: ExportStatus;
  createdAt: string;
  readyAt: string | null;
  expiresAt: string | null;
  byteSize: number | null;
  /** Present only while the export is ready: a one-use link, valid until `expiresAt`. */
  download: { url: string; expiresAt: string } | null;
}

export interface ExportContext {
  db: Db;
  ids: IdGenerator;
  random: Random;
  now: number;
}

/** Exports are a member's own act: an API key (a machine credential) never reads a person's data out. */
function assertMember(actor: Principal): void {
  if (actor.credential !== "token") throw new ApiError("forbidden", "a data export is requested with the member's own access token, not an API key");
}

/**
 * Queues an export of the caller's data. At most EXPORTS_PER_DAY in any 24 hours: counted under
 * the member's row lock, so simultaneous requests cannot all pass the count.
 */
export async function requestExport(ctx: ExportContext, actor: Principal): Promise<{ exportId: string }> {
  assertMember(actor);
  const at = new Date(ctx.now);
  return ctx.db.transaction(async (tx) => {
    const db = tx as unknown as Db;
    await queryRows(db, sql`select id from users where id = ${actor.userId} for update`);
    const recent = await queryRows<{ created_at: string | Date }>(
      db,
      sql`select created_at from account_exports where user_id = ${actor.userId} and created_at > ${new Date(ctx.now - DAY_MS).toISOString()}::timestamptz order by created_at`,
    );
    if (recent.length >= EXPORTS_PER_DAY) {
      const oldest = new Date(recent[0]!.created_at).getTime();
      const retryAfter = Math.max(1, Math.ceil((oldest + DAY_MS - ctx.now) / 1000));
      throw new ApiError("rate_limit_exceeded", `at most ${EXPORTS_PER_DAY} exports in 24 hours`, { retryAfter });
    }
    const exportId = ctx.ids.next("exp");
    await tx.insert(accountExports).values({ id: exportId, userId: actor.userId, status: "pending", createdAt: at });
    return { exportId };
  });
}

export function downloadPath(exportId: string, token: string): string {
  return `/api/v1/account/exports/${exportId}/download?token=${token}`;
}

/**
 * The caller's export. Another member's export answers exactly as one that does not exist. While
 * it is ready, each call issues a fresh download link and the one issued before stops working:
 * only the token's hash is stored, so a link cannot be shown twice.
 */
export async function exportStatus(ctx: ExportContext, actor: Principal, exportId: string): Promise<ExportView> {
  assertMember(actor);
  const [row] = await ctx.db
    .select()
    .from(accountExports)
    .where(and(eq(accountExports.id, exportId), eq(accountExports.userId, actor.userId)))
    .limit(1);
  if (!row) throw new ApiError("not_found", "no such export");
  const expired = row.status === "ready" && row.expiresAt !== null && row.expiresAt.getTime() <= ctx.now;
  const status: ExportStatus = expired ? "expired" : (row.status as ExportStatus);
  let download: ExportView["download"] = null;
  if (status === "ready") {
    const token = toHex(ctx.random.bytes(32));
    const [issued] = await ctx.db
      .update(accountExports)
      .set({ tokenHash: await sha256Hex(token) })
      .where(and(eq(accountExports.id, row.id), eq(accountExports.status, "ready")))
      .returning({ id: accountExports.id });
    // Downloaded between the read and now: it is no longer ready.
    if (issued) download = { url: downloadPath(row.id, token), expiresAt: row.expiresAt!.toISOString() };
  }
  return {
    exportId: row.id,
    status: status === "ready" && !download ? "expired" : status,
    createdAt: row.createdAt.toISOString(),
    readyAt: row.readyAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    byteSize: row.byteSize,
    download,
  };
}

/**
 * Hands out the document once: the row is taken, marked expired and emptied in one statement, so
 * two concurrent uses of the same link cannot both get it. A wrong, used or expired link is 404.
 */
export async function takeDownload(ctx: { db: Db; now: number }, exportId: string, token: string): Promise<string> {
  const hash = await sha256Hex(token);
  const now = new Date(ctx.now).toISOString();
  const [taken] = await queryRows<{ document: string }>(
    ctx.db,
    sql`with taken as (
          select id, document from account_exports
          where id = ${exportId} and token_hash = ${hash} and status = 'ready' and expires_at > ${now}::timestamptz
          for update)
        update account_exports a set status = 'expired', downloaded_at = ${now}::timestamptz, document = null, token_hash = null
        from taken where a.id = taken.id
        returning taken.document`,
  );
  if (!taken) throw new ApiError("not_found", "no such export, or its link was used or has expired");
  return taken.document;
}
