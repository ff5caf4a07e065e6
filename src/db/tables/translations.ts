import { sql } from "drizzle-orm";
import { boolean, check, index, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "../schema";

/**
 * App strings, one row per (namespace, language, flat key). English rows are the source, loaded
 * from locales/en/*.json when the database is migrated; other languages come from admins or the
 * seeding jobs. `source_hash` is the hash of the English text a row was written from (its own text
 * for English), so a changed English string is found and translated again.
 */
export const translationStrings = pgTable(
  "translation_strings",
  {
    namespace: text("namespace").notNull(),
    language: text("language").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    sourceHash: text("source_hash").notNull(),
    origin: text("origin").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.language, t.key] }), check("translation_strings_origin_check", sql`${t.origin} in ('source', 'admin', 'machine')`)],
);

/** Per target language: where the job stands and the keys it left in English. */
export interface JobLanguageProgress {
  language: string;
  status: "pending" | "running" | "done";
  total: number;
  translated: number;
  untranslated: { key: string; reason: string }[];
}

/**
 * Seeding jobs. A job is claimed by setting `lease_until`; the holder renews it after each batch.
 * A job whose holder stopped (a restart, a crash) is claimed again once its lease has run out,
 * and goes on from the keys not yet stored.
 */
export const translationJobs = pgTable(
  "translation_jobs",
  {
    id: text("id").primaryKey(),
    namespace: text("namespace").notNull(),
    overwrite: boolean("overwrite").notNull(),
    status: text("status").notNull(),
    progress: jsonb("progress").$type<JobLanguageProgress[]>().notNull(),
    lastError: text("last_error"),
    leaseUntil: timestamp("lease_until", { withTimezone: true, mode: "date" }),
    requestedBy: text("requested_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    check("translation_jobs_status_check", sql`${t.status} in ('queued', 'running', 'waiting', 'done')`),
    index("translation_jobs_open_idx").on(t.createdAt).where(sql`${t.status} <> 'done'`),
  ],
);

/**
 * Translations of member text (messages, profiles), keyed by a hash of what was translated and
 * the target language, so the same text is sent to the model once and a different text can never
 * be answered from another's entry. Rows older than the cache's lifetime are pruned hourly.
 */
export const translationCache = pgTable(
  "translation_cache",
  {
    kind: text("kind").notNull(),
    cacheKey: text("cache_key").notNull(),
    targetLanguage: text("target_language").notNull(),
    result: jsonb("result").$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.cacheKey, t.targetLanguage] }),
    check("translation_cache_kind_check", sql`${t.kind} in ('message', 'profile')`),
    index("translation_cache_created_idx").on(t.createdAt),
  ],
);
