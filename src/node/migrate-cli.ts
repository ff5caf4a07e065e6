import { ConfigError, parseConfig } from "../config";
import { configuredSecrets, createJsonLogger } from "../platform/logger";
import { openDatabase } from "./deps";
import { migrateDatabase } from "./migrate";

/** `npm run db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database. */
try {
  const config = parseConfig(process.env);
  const logger = createJsonLogger({ level: config.LOG_LEVEL, secrets: configuredSecrets(config) });
  const database = await openDatabase(config, logger);
  try {
    const applied = await migrateDatabase(database, logger);
    console.log(applied === 0 ? "database is up to date" : `applied ${applied} migration(s)`);
  } finally {
    await database.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
