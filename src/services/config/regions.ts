import { eq } from "drizzle-orm";
import countryNames from "i18n-iso-countries/langs/en.json" with { type: "json" };
import { assertAdmin, type Principal } from "../../auth/principal";
import type { Db } from "../../db/port";
import { configDocuments } from "../../db/tables/admin";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";
import { recordAudit } from "../audit/log";

export interface Region {
  code: string;
  name: string;
}

/**
 * ISO 3166-1 alpha-2 codes with English names, from the maintained i18n-iso-countries data
 * (it also carries XK, the code in common use for Kosovo). Where it lists several names, the
 * first is the short English name.
 */
export const REGION_CATALOG: readonly Region[] = Object.entries(countryNames.countries as Record<string, string | string[]>)
  .map(([code, name]) => ({ code, name: Array.isArray(name) ? (name[0] as string) : name }))
  .sort((a, b) => a.code.localeCompare(b.code));

const NAMES = new Map(REGION_CATALOG.map((r) => [r.code, r.name]));
const DOCUMENT = "maps.regions";

export interface RegionsDocument {
  enabled: string[];
  /** 0 until the first write. */
  version: number;
  updatedAt: string | null;
  updatedBy: string | null;
}

export const regionsEtag = (version: number) => `"maps-regions-${version}"`;

async function readDocument(db: Db): Promise<RegionsDocument> {
  const [row] = await db.select().from(configDocuments).where(eq(configDocuments.name, DOCUMENT)).limit(1);
  if (!row) return { enabled: [], version: 0, updatedAt: null, updatedBy: null };
  return { enabled: (row.value as { enabled: string[] }).enabled, version: row.version, updatedAt: row.updatedAt.toISOString(), updatedBy: row.updatedBy };
}

/** What members see: the enabled regions with their names. */
export async function enabledRegions(db: Db): Promise<{ regions: Region[]; version: number }> {
  const doc = await readDocument(db);
  return { regions: doc.enabled.map((code) => ({ code, name: NAMES.get(code) ?? code })), version: doc.version };
}

/** The admin view: the whole catalog and the enabled set. */
export async function regionsConfig(db: Db, actor: Principal): Promise<RegionsDocument & { catalog: (Region & { enabled: boolean })[] }> {
  assertAdmin(actor);
  const doc = await readDocument(db);
  const enabled = new Set(doc.enabled);
  return { ...doc, catalog: REGION_CATALOG.map((r) => ({ ...r, enabled: enabled.has(r.code) })) };
}

export interface RegionsWrite {
  db: Db;
  ids: IdGenerator;
  now: number;
  requestId: string;
}

/**
 * The If-Match header as RFC 9110 reads it for this document: `*` (any current version), or a list
 * of entity tags, one of which must be the current one. Answers the version it requires, or null
 * for `*`; a list of tags none of ours is refused as stale.
 */
export function versionsOf(ifMatch: string | undefined): "any" | number[] {
  if (ifMatch === undefined || ifMatch.trim() === "") throw new ApiError("precondition_required", "send If-Match with the ETag of the regions document you read");
  if (ifMatch.trim() === "*") return "any";
  return ifMatch.split(",").flatMap((tag) => {
    const m = /^(?:W\/)?"maps-regions-(\d{1,9})"$/.exec(tag.trim());
    return m ? [Number(m[1])] : [];
  });
}

/** Replaces the enabled set when the document is still at the version the writer read. */
export async function replaceRegions(w: RegionsWrite, actor: Principal, input: { enabled: string[]; ifMatch: string | undefined }): Promise<RegionsDocument> {
  assertAdmin(actor);
  const unknown = input.enabled.filter((code) => !NAMES.has(code));
  if (unknown.length > 0) {
    throw new ApiError("invalid_input", `not ISO 3166-1 alpha-2 codes: ${unknown.slice(0, 20).join(", ")}`, {
      details: input.enabled.flatMap((code, i) => (NAMES.has(code) ? [] : [{ path: `enabled.${i}`, message: `'${code}' is not an ISO 3166-1 alpha-2 code (upper case)` }])).slice(0, 50),
    });
  }
  const wanted = versionsOf(input.ifMatch);
  const enabled = [...new Set(input.enabled)].sort();
  return w.db.transaction(async (tx) => {
    // The row lock orders two writers: the second sees the first one's version and is refused.
    const [current] = await tx.select().from(configDocuments).where(eq(configDocuments.name, DOCUMENT)).for("update");
    const version = current?.version ?? 0;
    if (wanted !== "any" && !wanted.includes(version)) throw new ApiError("precondition_failed", `the regions document is at version ${version}; read it again and reapply your change`, { headers: { ETag: regionsEtag(version) } });
    const at = new Date(w.now);
    const next = { value: { enabled }, version: version + 1, updatedBy: actor.userId, updatedAt: at };
    // Two first writes race on the insert: the loser hits the primary key and answers 412 below.
    const written = current
      ? await tx.update(configDocuments).set(next).where(eq(configDocuments.name, DOCUMENT)).returning({ version: configDocuments.version })
      : await tx.insert(configDocuments).values({ name: DOCUMENT, ...next }).onConflictDoNothing().returning({ version: configDocuments.version });
    if (written.length === 0) throw new ApiError("precondition_failed", "the regions document was written at the same moment; read it again and reapply your change");
    const before = new Set(current ? (current.value as { enabled: string[] }).enabled : []);
    await recordAudit(tx, w.ids, { actor, requestId: w.requestId }, at, {
      action: "maps_regions.replace",
      targetType: "config",
      targetId: DOCUMENT,
      details: { version: version + 1, added: enabled.filter((c) => !before.has(c)), removed: [...before].filter((c) => !enabled.includes(c)) },
    });
    return { enabled, version: version + 1, updatedAt: at.toISOString(), updatedBy: actor.userId };
  });
}
