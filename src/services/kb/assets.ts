import { desc, eq, lt } from "drizzle-orm";
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { kbAssets, type ManifestSection } from "../../db/tables/kb";
import { ApiError } from "../../errors";
import { toHex } from "../../platform/hash";
import type { IdGenerator } from "../../platform/ids";
import type { BlobStore } from "./blob-store";
import { htmlTitle, htmlToText } from "./html";
import { assetSections, type KbCache } from "./snapshot";
import { fetchPublicUrl, type HostResolver } from "./url-fetch";
import { recordAudit } from "../audit/log";

/** decisions.md: KB asset uploads may be up to 10 MiB. */
export const MAX_ASSET_BYTES = 10 * 1024 * 1024;
export const ASSET_TYPES = ["text/markdown", "text/plain", "text/html"] as const;
const FETCH_TYPES = [...ASSET_TYPES, "text/x-markdown", "application/xhtml+xml"];
const FETCH_TIMEOUT_MS = 10_000;
const MAX_GROUNDING_CHARS = MAX_ASSET_BYTES;

export interface AssetContext {
  db: Db;
  ids: IdGenerator;
  blobs: BlobStore;
  cache: KbCache;
  fetch: typeof fetch;
  resolver: HostResolver;
  allowedHosts?: readonly string[];
  /** The request a write serves and its time, for its audit entry. */
  requestId: string;
  now: number;
}

export type AssetInput =
  | { kind: "file"; bytes: Uint8Array; fileName: string; declaredType: string; title?: string; groundingText?: string }
  | { kind: "url"; url: string; title?: string; groundingText?: string };

/** An asset and its grounding manifest, as the API shows it. */
export interface AssetRecord {
  assetId: string;
  title: string;
  source: string;
  contentType: string;
  bytes: number;
  contentHash: string;
  sections: ManifestSection[];
  createdAt: string;
  createdBy: string;
}

const bad = (path: string, message: string) => new ApiError("invalid_input", message, { details: [{ path, message }] });

function typeOfFile(declared: string, fileName: string): string {
  const type = declared.split(";")[0]!.trim().toLowerCase();
  if ((ASSET_TYPES as readonly string[]).includes(type)) return type;
  if (type === "text/x-markdown") return "text/markdown";
  if (type === "" || type === "application/octet-stream") {
    const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
    if (ext === "md" || ext === "markdown") return "text/markdown";
    if (ext === "txt") return "text/plain";
    if (ext === "html" || ext === "htm") return "text/html";
  }
  throw bad("file", `file type '${type || "unknown"}' is not accepted; send Markdown, plain text or HTML`);
}

function decodeText(bytes: Uint8Array, path: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw bad(path, "the document is not UTF-8 text");
  }
  // Valid UTF-8, but a text column cannot hold it, and no text document contains it.
  if (text.includes("\u0000")) throw bad(path, "the document contains NUL bytes, so it is not text");
  return text;
}

function titleFrom(text: string, contentType: string, fallback: string): string {
  if (contentType === "text/html") return htmlTitle(text) ?? fallback;
  const heading = /^#{1,6}[ \t]+(.+)$/m.exec(text)?.[1]?.trim();
  return heading || fallback;
}

type AssetRow = Omit<typeof kbAssets.$inferSelect, "groundingText" | "blobKey">;

const MANIFEST_COLUMNS = {
  id: kbAssets.id,
  title: kbAssets.title,
  source: kbAssets.source,
  contentType: kbAssets.contentType,
  byteSize: kbAssets.byteSize,
  contentHash: kbAssets.contentHash,
  sections: kbAssets.sections,
  createdBy: kbAssets.createdBy,
  createdAt: kbAssets.createdAt,
};

function toRecord(row: AssetRow): AssetRecord {
  return {
    assetId: row.id,
    title: row.title,
    source: row.source,
    contentType: row.contentType,
    bytes: row.byteSize,
    contentHash: row.contentHash,
    sections: row.sections,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
  };
}

/** Stores an uploaded or fetched document and indexes its grounding text. */
export async function createAsset(ctx: AssetContext, actor: Principal, input: AssetInput): Promise<AssetRecord> {
  assertAdmin(actor);
  let bytes: Uint8Array;
  let contentType: string;
  let source: string;
  let fallbackTitle: string;
  if (input.kind === "file") {
    contentType = typeOfFile(input.declaredType, input.fileName);
    if (input.bytes.byteLength > MAX_ASSET_BYTES) throw new ApiError("payload_too_large", `the file is larger than ${MAX_ASSET_BYTES} bytes`);
    bytes = input.bytes;
    const name = input.fileName.replace(/[\\/]/g, "_").slice(0, 200) || "upload";
    source = `upload:${name}`;
    fallbackTitle = name;
  } else {
    const fetched = await fetchPublicUrl(input.url, {
      fetch: ctx.fetch,
      resolver: ctx.resolver,
      maxBytes: MAX_ASSET_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
      allowedTypes: FETCH_TYPES,
      allowedHosts: ctx.allowedHosts,
    });
    bytes = fetched.bytes;
    contentType = fetched.contentType === "application/xhtml+xml" ? "text/html" : fetched.contentType === "text/x-markdown" ? "text/markdown" : fetched.contentType;
    source = fetched.url;
    fallbackTitle = new URL(fetched.url).hostname + new URL(fetched.url).pathname;
  }
  const text = decodeText(bytes, input.kind);
  const grounding = (input.groundingText ?? (contentType === "text/html" ? htmlToText(text) : text)).trim();
  if (grounding === "") throw bad(input.groundingText === undefined ? input.kind : "groundingText", "the asset has no text to ground answers on");
  if (grounding.length > MAX_GROUNDING_CHARS) throw bad("groundingText", `grounding text is limited to ${MAX_GROUNDING_CHARS} characters`);

  const id = ctx.ids.next("kba");
  const title = (input.title?.trim() || titleFrom(text, contentType, fallbackTitle)).slice(0, 200);
  const sections = assetSections({ id, title, source, groundingText: grounding }).map((s) => ({ sectionId: s.id, title: s.title, chars: s.text.length }));
  const contentHash = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)));
  const blobKey = `kb-assets/${id}`;
  await ctx.blobs.put(blobKey, bytes, contentType);
  let row: AssetRow;
  try {
    row = await ctx.db.transaction(async (tx) => {
      const [inserted] = (await tx
        .insert(kbAssets)
        .values({ id, title, source, contentType, byteSize: bytes.byteLength, contentHash, blobKey, groundingText: grounding, sections, createdBy: actor.userId })
        .returning(MANIFEST_COLUMNS)) as [AssetRow];
      await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, inserted.createdAt, {
        action: "kb_asset.create",
        targetType: "kb_asset",
        targetId: id,
        details: { title, source, contentType, bytes: bytes.byteLength },
      });
      return inserted;
    });
  } catch (err) {
    await ctx.blobs.delete(blobKey).catch(() => undefined);
    throw err;
  }
  ctx.cache.invalidate();
  return toRecord(row);
}

/**
 * Assets with their manifests, newest first, a page at a time: a manifest lists every section of
 * its asset, so a few large documents would make the whole list megabytes long. The cursor is the
 * last asset id of the previous page (ids grow with time).
 */
export async function listAssets(ctx: Pick<AssetContext, "db">, page: { limit: number; after?: string }): Promise<{ assets: AssetRecord[]; nextCursor: string | null }> {
  const rows = await ctx.db
    .select(MANIFEST_COLUMNS)
    .from(kbAssets)
    .where(page.after === undefined ? undefined : lt(kbAssets.id, page.after))
    .orderBy(desc(kbAssets.id))
    .limit(page.limit + 1);
  const assets = rows.slice(0, page.limit).map(toRecord);
  return { assets, nextCursor: rows.length > page.limit ? (assets[assets.length - 1]?.assetId ?? null) : null };
}

/** Removes the asset, its manifest and (by invalidating the snapshot) its index entries. */
export async function deleteAsset(ctx: AssetContext, actor: Principal, assetId: string): Promise<void> {
  assertAdmin(actor);
  const removed = await ctx.db.transaction(async (tx) => {
    const [deleted] = await tx.delete(kbAssets).where(eq(kbAssets.id, assetId)).returning({ blobKey: kbAssets.blobKey, title: kbAssets.title });
    if (!deleted) throw new ApiError("not_found", "no such asset");
    await recordAudit(tx, ctx.ids, { actor, requestId: ctx.requestId }, ctx.now, { action: "kb_asset.delete", targetType: "kb_asset", targetId: assetId, details: { title: deleted.title } });
    return deleted;
  });
  ctx.cache.invalidate();
  await ctx.blobs.delete(removed.blobKey);
}
