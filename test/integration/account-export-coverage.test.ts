import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { ExportDocument } from "../../src/routes/account/document-schema";
import { MEMBER_COLUMNS } from "../../src/services/account/member-columns";
import { useTestDatabase } from "../support/environment";
import { schemaMemberColumns } from "../support/member-columns";

const env = useTestDatabase();

/** A table added later with a member column fails here until the export includes it or excludes it with a reason. */
const memberColumns = () => schemaMemberColumns(env.db.database.session().db);

describe("the export's coverage of the schema", () => {
  it("names every column that refers to a member, as exported or excluded with a reason", async () => {
    const found = await memberColumns();
    expect(found.length).toBeGreaterThan(30);
    expect(found.filter((c) => !(c in MEMBER_COLUMNS))).toEqual([]);
  });

  it("finds a table added later: a new member column is a gap until it is listed", async () => {
    const db = env.db.database.session().db;
    await db.execute(sql`create table probe_notes (id text primary key, author text references users(id), owner_user_id text, edited_by text)`);
    try {
      const found = await memberColumns();
      expect(found.filter((c) => !(c in MEMBER_COLUMNS))).toEqual(["probe_notes.author", "probe_notes.edited_by", "probe_notes.owner_user_id"]);
    } finally {
      await db.execute(sql`drop table probe_notes`);
    }
  });

  it("lists no column the schema does not have, and points exported ones at a section of the document", async () => {
    const columns = new Set(
      (await queryRows<{ col: string }>(env.db.database.session().db, sql`select table_name || '.' || column_name as col from information_schema.columns where table_schema = 'public'`)).map((r) => r.col),
    );
    const sections = Object.keys(ExportDocument.shape);
    for (const [column, { export: coverage }] of Object.entries(MEMBER_COLUMNS)) {
      expect(columns.has(column), column).toBe(true);
      if ("section" in coverage) expect(sections, column).toContain(coverage.section.split(/[ ,.]/)[0]);
      else expect(coverage.excluded.length, column).toBeGreaterThan(20);
    }
  });

  it("documents every exclusion for members in docs/api/account.md", () => {
    const doc = readFileSync(new URL("../../docs/api/account.md", import.meta.url), "utf8");
    const excluded = Object.entries(MEMBER_COLUMNS).filter(([, c]) => "excluded" in c.export).map(([column]) => column);
    expect(excluded.filter((column) => !doc.includes(`\`${column}\``))).toEqual([]);
  });
});
