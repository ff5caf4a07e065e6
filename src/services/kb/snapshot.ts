import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import type { Clock } from "../../platform/clock";
import { sharedLoad, type LoadSlot } from "../../platform/shared-load";
import { buildIndex, type SectionIndex } from "./retrieval";
import { splitSections, type Section } from "./sections";

/** api-spec: readers may use a copy of the knowledge base for up to 10 minutes. */
export const KB_CACHE_MS = 10 * 60 * 1000;

export interface KbDocument {
  content: string;
  version: number;
  updatedAt: string;
}

export interface AssetGrounding {
  id: string;
  title: string;
  source: string;
  groundingText: string;
}

/** Everything the support agent reads: the current document and every asset's grounding text. */
export interface KbSnapshot {
  document: KbDocument;
  stamp: string;
  sections: Section[];
  /** Built on first use (GET /api/v1/kb needs only the document), once per snapshot. */
  index(): Promise<SectionIndex>;
}

export const EMPTY_DOCUMENT: KbDocument = { content: "", version: 0, updatedAt: new Date(0).toISOString() };

export function kbSections(document: KbDocument): Section[] {
  return splitSections(document.content, { idPrefix: "kb", source: (slugPath) => `kb#${slugPath}`, documentTitle: "Knowledge base" });
}

export function assetSections(asset: AssetGrounding): Section[] {
  return splitSections(asset.groundingText, { idPrefix: asset.id, source: () => asset.source, documentTitle: asset.title, titlePrefix: asset.title });
}

export function makeSnapshot(document: KbDocument, assets: AssetGrounding[], stamp: string): KbSnapshot {
  const sections = [...kbSections(document), ...assets.flatMap(assetSections)];
  // Built once and kept; a failed build is not kept, so the next question tries again instead
  // of failing until the KB changes, and one abandoned with its request (Workers) is rebuilt.
  const index: LoadSlot<SectionIndex> = {};
  return { document, stamp, sections, index: () => sharedLoad(index, () => buildIndex(sections), { joinMs: KB_JOIN_MS, keep: true }) };
}

/**
 * How long a request waits on a KB load or index build another request began before it starts
 * its own: longer than a healthy load of a large KB takes, short enough that a load whose
 * request was cancelled on Workers (which then never settles) costs one slow answer, not all.
 */
const KB_JOIN_MS = 10_000;

/**
 * A cheap fingerprint of what the snapshot was built from: the document version and the asset
 * set (count and newest id; ids sort by creation time, so any add or delete changes one of them).
 */
async function currentStamp(db: Db): Promise<string> {
  const [row] = await queryRows<{ v: string | null; n: string; last: string | null }>(
    db,
    sql`select (select max(version) from kb_versions)::text as v, (select count(*) from kb_assets)::text as n, (select max(id) from kb_assets) as last`,
  );
  return `${row?.v ?? 0}:${row?.n ?? 0}:${row?.last ?? ""}`;
}

async function loadSnapshot(db: Db): Promise<KbSnapshot> {
  const [docRows, assets] = await Promise.all([
    queryRows<{ version: string; content: string; created_at: Date | string }>(db, sql`select version::text as version, content, created_at from kb_versions order by version desc limit 1`),
    queryRows<{ id: string; title: string; source: string; grounding_text: string }>(db, sql`select id, title, source, grounding_text from kb_assets order by id`),
  ]);
  const doc = docRows[0];
  const document: KbDocument = doc ? { content: doc.content, version: Number(doc.version), updatedAt: new Date(doc.created_at).toISOString() } : EMPTY_DOCUMENT;
  const grounding = assets.map((a) => ({ id: a.id, title: a.title, source: a.source, groundingText: a.grounding_text }));
  const last = assets.length ? assets[assets.length - 1]!.id : "";
  return makeSnapshot(document, grounding, `${document.version}:${assets.length}:${last}`);
}

export interface KbCache {
  get(db: Db): Promise<KbSnapshot>;
  /** The writer's own instance sees its change at once; other instances within KB_CACHE_MS. */
  invalidate(): void;
}

/**
 * One snapshot per app instance. After the cache time a cheap fingerprint query decides whether
 * to reload; when nothing changed the snapshot (and its built index) is kept for another period.
 */
export function createKbCache(clock: Clock): KbCache {
  let snapshot: KbSnapshot | undefined;
  let checkedAt = 0;
  const pending: LoadSlot<KbSnapshot> = {};
  // A refresh that began before an invalidation must not mark the older data as fresh.
  let generation = 0;

  const refresh = async (db: Db): Promise<KbSnapshot> => {
    const started = generation;
    const checked = clock.now();
    if (snapshot && (await currentStamp(db)) === snapshot.stamp) {
      if (started === generation) checkedAt = checked;
      return snapshot;
    }
    const fresh = await loadSnapshot(db);
    // A load that began before a write may finish after the write's own reload: its data is
    // older, so it answers its own caller but is not kept.
    if (started === generation) {
      snapshot = fresh;
      checkedAt = checked;
    }
    return fresh;
  };

  return {
    async get(db) {
      if (snapshot && clock.now() - checkedAt < KB_CACHE_MS) return snapshot;
      // One refresh at a time, on the database session of the request that begins it; it leaves
      // the slot when it ends (only its own: an older refresh ending late must not drop a newer one).
      return sharedLoad(pending, () => refresh(db), { joinMs: KB_JOIN_MS, keep: false });
    },
    invalidate() {
      generation++;
      checkedAt = -Infinity;
      pending.current = undefined;
    },
  };
}
