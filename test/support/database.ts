import { inject } from "vitest";
import { createPgDatabase, type NodeDatabase } from "../../src/node/database";
import { databaseUrl, withPgClient } from "./pg";
import { TEST_PG_ADMIN_URL, randomSuffix } from "./services";

export interface TestDatabase {
  name: string;
  url: string;
  database: NodeDatabase;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file, cloned from the template. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `api_t_${Date.now().toString(36)}_${randomSuffix()}`;
  const template = options.migrated === false ? "template0" : inject("templateDatabase");
  await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`create database "${name}" template "${template}"`));
  const url = databaseUrl(name);
  const database = createPgDatabase(url, { max: 10 });
  return {
    name,
    url,
    database,
    async drop() {
      await database.close().catch(() => {});
      await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`drop database if exists "${name}" with (force)`));
    },
  };
}
