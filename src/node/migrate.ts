import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import type { Db } from "../db/port";
import { queryRows } from "../db/rows";
import type { Logger } from "../platform/logger";
import { syncSourceBundles } from "../services/translations/bundles";
import type { NodeDatabase } from "./database";
import { readSourceBundles, SOURCE_LOCALES_FOLDER } from "./locales";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../migrations", import.meta.url));

// Any fixed 64-bit number; every instance of the platform uses the same one.
const MIGRATION_LOCK_KEY = 7_305_162_418_001n;

async function appliedCount(db: Db): Promise<number> {
  const [table] = await queryRows<{ n: string | number }>(db, sql`
    select count(*) as n from information_schema.tables
    where table_schema = 'drizzle' and table_name = '__drizzle_migrations'`);
  if (Number(table?.n ?? 0) === 0) return 0;
  const [applied] = await queryRows<{ n: string | number }>(db, sql`select count(*) as n from drizzle.__drizzle_migrations`);
  return Number(applied?.n ?? 0);
}

/**
 * Applies pending migrations under a session-level advisory lock, so two servers starting at
 * once queue up: the second finds nothing left to do. Then loads the English translation bundles
 * of locales/en, which change with the code rather than by migration. Returns how many
 * migrations it applied.
 */
export async function migrateDatabase(database: NodeDatabase, logger: Logger, folder = MIGRATIONS_FOLDER, locales = SOURCE_LOCALES_FOLDER): Promise<number> {
  return database.withConnection(async (db) => {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      const before = await appliedCount(db);
      // The node-postgres migrator only drives drizzle's dialect-neutral migrate(); it works for PGlite too.
      await migrate(db as never, { migrationsFolder: folder });
      const applied = (await appliedCount(db)) - before;
      logger.info("migrations checked", { applied, total: before + applied });
      // A folder that stops short of the translations migration (a test of one migration) has no table to load into.
      const [table] = await queryRows<{ t: string | null }>(db, sql`select to_regclass('translation_strings')::text as t`);
      if (table?.t) {
        const strings = await syncSourceBundles(db, readSourceBundles(locales), Date.now());
        if (strings.written + strings.removed > 0) logger.info("english translation bundles loaded", strings);
      }
      return applied;
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  });
}
