import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createPgDatabase } from "../../src/node/database";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/node/migrate";
import { SOURCE_LOCALES_FOLDER } from "../../src/node/locales";
import { createJsonLogger } from "../../src/platform/logger";
import { databaseUrl, withPgClient } from "./pg";
import { TEST_PG_ADMIN_URL } from "./services";

/**
 * Named after the migrations' content and the English translation bundles loaded with them, so a
 * changed migration or source string gets a new template.
 */
export function templateName(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(MIGRATIONS_FOLDER).filter((f) => f.endsWith(".sql")).sort()) {
    hash.update(file).update(readFileSync(join(MIGRATIONS_FOLDER, file)));
  }
  for (const file of readdirSync(SOURCE_LOCALES_FOLDER).sort()) {
    hash.update(file).update(readFileSync(join(SOURCE_LOCALES_FOLDER, file)));
  }
  return `api_tpl_${hash.digest("hex").slice(0, 12)}`;
}

/**
 * Creates the migrated template database once per migrations version. Test files clone it
 * (CREATE DATABASE … TEMPLATE), which takes tens of milliseconds instead of a migration run.
 */
export async function ensureTemplate(): Promise<string> {
  const name = templateName();
  await withPgClient(TEST_PG_ADMIN_URL, async (admin) => {
    // Two test runs on one machine must not build the same template at once.
    await admin.query("select pg_advisory_lock(4242001)");
    const exists = await admin.query("select 1 from pg_database where datname = $1", [name]);
    if (exists.rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`drop database if exists "${building}" with (force)`);
      await admin.query(`create database "${building}"`);
      const database = createPgDatabase(databaseUrl(building), { max: 1 });
      try {
        await migrateDatabase(database, createJsonLogger({ level: "silent" }));
      } finally {
        await database.close();
      }
      await admin.query(`alter database "${building}" rename to "${name}"`);
    }
    await admin.query("select pg_advisory_unlock(4242001)");
  });
  return name;
}
