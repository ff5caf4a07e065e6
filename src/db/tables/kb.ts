import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "../schema";

/**
 * Every version of the support knowledge base; the newest row is the current document. A PUT adds
 * a row instead of overwriting, so earlier versions stay readable and a bad edit can be undone.
 */
export const kbVersions = pgTable("kb_versions", {
  version: bigserial("version", { mode: "number" }).primaryKey(),
  content: text("content").notNull(),
  /** Null for the starter document the migration ships. */
  createdBy: text("created_by").references(() => users.id),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/** One grounding section as the manifest lists it; the text itself is in the row's grounding text. */
export interface ManifestSection {
  sectionId: string;
  title: string;
  chars: number;
}

/**
 * Uploaded or fetched support material. The bytes live in the blob store under `blobKey`; the
 * text the support agent retrieves from is `groundingText` (given by the admin, or extracted).
 */
export const kbAssets = pgTable(
  "kb_assets",
  {
    id: text("id").primaryKey(),
    title: text("title").notNull(),
    /** `upload:<file name>` or the fetched URL. */
    source: text("source").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: integer("byte_size").notNull(),
    /** SHA-256 of the stored bytes, hex. */
    contentHash: text("content_hash").notNull(),
    blobKey: text("blob_key").notNull(),
    groundingText: text("grounding_text").notNull(),
    sections: jsonb("sections").$type<ManifestSection[]>().notNull(),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("kb_assets_created_at_idx").on(t.createdAt)],
);
