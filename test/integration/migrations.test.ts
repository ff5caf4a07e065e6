import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { createPgDatabase, openPgliteDatabase } from "../../src/node/database";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/node/migrate";
import { createJsonLogger } from "../../src/platform/logger";
import { buildTestApp } from "../support/app";
import { useTestDatabase } from "../support/environment";
import journal from "../../migrations/meta/_journal.json";

const silent = createJsonLogger({ level: "silent" });
const migrationCount = journal.entries.length;

describe("migrations on Postgres", () => {
  const empty = useTestDatabase({ migrated: false });

  it("two servers migrating one empty database at once apply each migration exactly once", async () => {
    const a = createPgDatabase(empty.db.url, { max: 2 });
    const b = createPgDatabase(empty.db.url, { max: 2 });
    try {
      const applied = await Promise.all([migrateDatabase(a, silent), migrateDatabase(b, silent)]);
      expect(applied.sort()).toEqual([0, migrationCount]);
      const rows = await queryRows<{ n: string }>(a.db, sql`select count(*) as n from drizzle.__drizzle_migrations`);
      expect(Number(rows[0]?.n)).toBe(migrationCount);
      expect(await migrateDatabase(a, silent)).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("ships generated SQL for every journal entry", () => {
    expect(MIGRATIONS_FOLDER.endsWith("migrations")).toBe(true);
    expect(migrationCount).toBeGreaterThan(0);
  });

  it("creates indexes IF NOT EXISTS from 0050 on, so one built beforehand CONCURRENTLY is kept (README, Deploying)", () => {
    const plain = journal.entries
      .filter((e) => e.idx >= 50)
      .flatMap((e) => readFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), "utf8").split("\n").filter((l) => /^CREATE (UNIQUE )?INDEX (?!IF NOT EXISTS)/.test(l)).map((l) => `${e.tag}: ${l.slice(0, 60)}`));
    expect(plain).toEqual([]);
  });
});

describe("embedded PGlite database", () => {
  const dir = mkdtempSync(join(tmpdir(), "api-pglite-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("initialises under DATA_DIR, migrates, serves health, and reopens", { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ sink: (l) => lines.push(l) });
    const first = await openPgliteDatabase(dir, logger);
    try {
      expect(await migrateDatabase(first, logger)).toBe(migrationCount);
      const res = await buildTestApp({ database: first }).request("/health");
      expect(res.status).toBe(200);
    } finally {
      await first.close();
    }
    expect(lines.some((l) => l.includes("initialising the embedded database"))).toBe(true);

    const again = await openPgliteDatabase(dir, logger);
    try {
      expect(await migrateDatabase(again, logger)).toBe(0);
      // One opener at a time: a second copy of the pages would lose whatever it did not write last.
      await expect(openPgliteDatabase(dir, logger)).rejects.toThrow("already open in this process");
    } finally {
      await again.close();
    }
    expect(lines.some((l) => l.includes("opening the embedded database"))).toBe(true);
  });
});
