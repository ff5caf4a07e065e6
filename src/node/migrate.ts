import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import type { Db } from "../db/port";
import { queryRows } from "../db/rows";
import type { Logger } from "../platform/logger";
import type { NodeDatabase } from "./database";

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
 * once queue up: the second finds nothing left to do. Returns how many it applied.
 */
export async function migrateDatabase(database: NodeDatabase, logger: Logger, folder = MIGRATIONS_FOLDER): Promise<number> {
  return database.withConnection(async (db) => {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      const before = await appliedCount(db);
      // The node-postgres migrator only drives drizzle's dialect-neutral migrate(); it works for PGlite too.
      await migrate(db as never, { migrationsFolder: folder });
      const applied = (await appliedCount(db)) - before;
      logger.info("migrations checked", { applied, total: before + applied });
      return applied;
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  });
}
