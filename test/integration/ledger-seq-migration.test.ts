import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPgDatabase } from "../../src/node/database";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/node/migrate";
import { createJsonLogger } from "../../src/platform/logger";
import { useTestDatabase } from "../support/environment";
import { withPgClient } from "../support/pg";

const silent = createJsonLogger({ level: "silent" });

/** The migrations up to, not including, the one whose tag ends with `tag`. */
function migrationsBefore(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), "api-migrations-"));
  cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journalFile = join(dir, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag.endsWith(tag));
  if (at < 0) throw new Error(`no migration ${tag}`);
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
  return dir;
}

describe("the migration that gives postings their place in the account", () => {
  const empty = useTestDatabase({ migrated: false });
  const before = migrationsBefore("_ledger_posting_seq");
  afterAll(() => rmSync(before, { recursive: true, force: true }));

  it("numbers existing postings per account in id order, and new ones follow on under the same rules", async () => {
    const database = createPgDatabase(empty.db.url, { max: 2 });
    try {
      await migrateDatabase(database, silent, before);
      await withPgClient(empty.db.url, async (c) => {
        await c.query(`insert into users (id, subject) values ('usr_a', 'a'), ('usr_b', 'b')`);
        await c.query(`insert into ledger_accounts (id, kind, user_id) values ('wal_a', 'wallet', 'usr_a'), ('wal_b', 'wallet', 'usr_b')`);
        for (const [i, [from, to, amount]] of ([["sys_mint", "wal_a", 50], ["wal_a", "wal_b", 20], ["sys_mint", "wal_b", 5], ["wal_b", "wal_a", 1]] as const).entries()) {
          await c.query("begin");
          await c.query(`insert into ledger_transactions (id, type) values ($1, 'award')`, [`txn_${i}`]);
          await c.query(`insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ($1, $2, $3, 0), ($1, $4, $5, 0)`, [`txn_${i}`, from, -amount, to, amount]);
          await c.query("commit");
        }
      });
      await migrateDatabase(database, silent);

      await withPgClient(empty.db.url, async (c) => {
        const places = await c.query<{ account_id: string; amount: string; seq: string }>(`select account_id, amount::text, seq::text from ledger_postings order by account_id, id`);
        expect(places.rows.map((r) => [r.account_id, Number(r.amount), Number(r.seq)])).toEqual([
          ["sys_mint", -50, 1],
          ["sys_mint", -5, 2],
          ["wal_a", 50, 1],
          ["wal_a", -20, 2],
          ["wal_a", 1, 3],
          ["wal_b", 20, 1],
          ["wal_b", 5, 2],
          ["wal_b", -1, 3],
        ]);
        const accounts = await c.query<{ id: string; last_seq: string }>(`select id, last_seq::text from ledger_accounts order by id`);
        expect(accounts.rows).toEqual([
          // Seeded by a later migration (account erasure's forfeitures).
          { id: "sys_forfeited", last_seq: "0" },
          { id: "sys_mint", last_seq: "2" },
          { id: "sys_subscription_revenue", last_seq: "0" },
          { id: "wal_a", last_seq: "3" },
          { id: "wal_b", last_seq: "3" },
        ]);

        // A new posting takes the next place whatever it is given; places move only through postings.
        await c.query("begin");
        await c.query(`insert into ledger_transactions (id, type) values ('txn_new', 'award')`);
        const posted = await c.query<{ account_id: string; seq: string }>(
          `insert into ledger_postings (transaction_id, account_id, amount, balance_after, seq) values ('txn_new', 'sys_mint', -2, 0, 99), ('txn_new', 'wal_a', 2, 0, 99) returning account_id, seq::text`,
        );
        await c.query("commit");
        expect(posted.rows).toEqual([
          { account_id: "sys_mint", seq: "3" },
          { account_id: "wal_a", seq: "4" },
        ]);
        await expect(c.query(`update ledger_accounts set last_seq = 0 where id = 'wal_a'`)).rejects.toMatchObject({ code: "42501" });
        await expect(c.query(`insert into ledger_accounts (id, kind, user_id, last_seq) values ('wal_c', 'wallet', 'usr_a', 5)`)).rejects.toMatchObject({ code: "42501" });
        await expect(c.query(`update ledger_postings set seq = 7 where account_id = 'wal_a'`)).rejects.toMatchObject({ code: "42501" });
      });
    } finally {
      await database.close();
    }
  });
});
