import { desc, lt, sql } from "drizzle-orm";
import type { Principal } from "../../auth/principal";
import { assertAdmin } from "../../auth/principal";
import { kbVersions } from "../../db/tables/kb";
import type { Db } from "../../db/port";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import { recordAudit } from "../audit/log";
import type { KbCache, KbDocument } from "./snapshot";

export interface KbContext {
  db: Db;
  cache: KbCache;
  ids: IdGenerator;
  /** The request a write serves, for its audit entry. */
  requestId: string;
}

/** The current document as readers see it: at most KB_CACHE_MS old. */
export async function readKb(ctx: KbContext): Promise<KbDocument> {
  return (await ctx.cache.get(ctx.db)).document;
}

/** Replaces the whole document with a new version; earlier versions are kept. */
export async function replaceKb(ctx: KbContext, actor: Principal, content: string): Promise<KbDocument> {
  assertAdmin(actor);
  if (content.trim() === "") throw new ApiError("invalid_input", "content must not be empty", { details: [{ path: "content", message: "must contain some Markdown" }] });
  const row = await ctx.db.transaction(async (tx) => {
    const [inserted] = await tx.insert(kbVersions).values({ content, createdBy: actor.userId }).returning({ version: kbVersions.version, createdAt: kbVersions.createdAt });
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, inserted!.createdAt, {
      action: "kb.replace",
      targetType: "kb_version",
      targetId: String(inserted!.version),
      details: { bytes: new TextEncoder().encode(content).byteLength },
    });
    return inserted;
  });
  ctx.cache.invalidate();
  return { content, version: row!.version, updatedAt: row!.createdAt.toISOString() };
}

export interface KbVersionEntry {
  version: number;
  createdAt: string;
  createdBy: string | null;
  bytes: number;
  current: boolean;
}

/** Versions newest first, `limit` at a time; `before` is the `nextCursor` of the previous page. */
export async function listKbVersions(ctx: KbContext, actor: Principal, page: { limit: number; before?: number }): Promise<{ versions: KbVersionEntry[]; nextCursor: string | null }> {
  assertAdmin(actor);
  const [newest] = await ctx.db.select({ version: kbVersions.version }).from(kbVersions).orderBy(desc(kbVersions.version)).limit(1);
  const rows = await ctx.db
    .select({ version: kbVersions.version, createdAt: kbVersions.createdAt, createdBy: kbVersions.createdBy, bytes: sql<number>`octet_length(${kbVersions.content})`.mapWith(Number) })
    .from(kbVersions)
    .where(page.before === undefined ? undefined : lt(kbVersions.version, page.before))
    .orderBy(desc(kbVersions.version))
    .limit(page.limit + 1);
  const more = rows.length > page.limit;
  const versions = rows.slice(0, page.limit).map((r) => ({
    version: r.version,
    createdAt: r.createdAt.toISOString(),
    createdBy: r.createdBy,
    bytes: r.bytes,
    current: r.version === newest?.version,
  }));
  return { versions, nextCursor: more ? String(versions[versions.length - 1]!.version) : null };
}
