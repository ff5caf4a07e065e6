import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { MEMBER_ROWS, TOMBSTONED } from "../../src/services/account/erasure";
import { useTestDatabase } from "../support/environment";

const env = useTestDatabase();

/**
 * Columns the erasure may read whole. The staff tables stay small (member-columns.ts says so);
 * the ledger's actor is found through the wallet's postings, and read whole only for someone who
 * acted as an admin (erasure.ts); the feed counters' keys start with `day`, which the erasure
 * bounds.
 */
const READ_WHOLE = new Set([
  "kb_versions.created_by",
  "kb_assets.created_by",
  "translation_jobs.requested_by",
  "messaging_workflows.created_by",
  "voucher_batches.created_by",
  "config_documents.updated_by",
  "partners.reviewed_by",
  "ledger_transactions.actor_user_id",
  "profile_impression_viewers.user_id",
  "profile_impression_viewers.viewer_id",
  "profile_impressions_capped.user_id",
]);

/**
 * The catalog, not the planner: at test sizes every table is small enough that Postgres would scan
 * it anyway, so what is checked is that an index could serve, not that one is chosen.
 */
describe("the erasure's lookups by index", () => {
  it("has an index leading on every column it deletes or tombstones by, and on every foreign key to a table it deletes from", async () => {
    const db = env.db.database.session().db;
    const erasedTables = new Set(["users", ...MEMBER_ROWS.map((m) => m.table)]);
    const foreignKeys = await queryRows<{ col: string; target: string }>(
      db,
      sql`select c.conrelid::regclass::text || '.' || a.attname as col, c.confrelid::regclass::text as target
          from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
          where c.contype = 'f' and c.connamespace = 'public'::regnamespace`,
    );
    const columns = new Set([
      ...MEMBER_ROWS.flatMap((m) => m.columns.map((c) => `${m.table}.${c}`)),
      ...TOMBSTONED.map((c) => `${c.table}.${c.column}`),
      ...foreignKeys.filter((f) => erasedTables.has(f.target)).map((f) => f.col),
    ]);
    expect(columns.size).toBeGreaterThan(40);
    // A partial index serves only if every row holding a member is in it.
    const indexed = await queryRows<{ col: string; pred: string | null }>(
      db,
      sql`select c.relname || '.' || a.attname as col, pg_get_expr(i.indpred, i.indrelid) as pred
          from pg_index i join pg_class c on c.oid = i.indrelid join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
          where c.relnamespace = 'public'::regnamespace`,
    );
    const served = new Set(indexed.filter((i) => i.pred === null || i.pred === `(${i.col.split(".")[1]} IS NOT NULL)`).map((i) => i.col));
    const unserved = [...columns].filter((c) => !served.has(c) && !READ_WHOLE.has(c)).sort();
    expect(unserved, "read whole at erasure: index them, or say in member-columns.ts why not").toEqual([]);
    // An exception that is indexed after all, or gone, is dropped from the list.
    expect([...READ_WHOLE].filter((c) => served.has(c) || !columns.has(c))).toEqual([]);
  });
});
