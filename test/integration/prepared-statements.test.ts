import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createNeonDatabase } from "../../src/db/neon";
import type { Db } from "../../src/db/port";
import { preparedRows, queryRows } from "../../src/db/rows";
import { sql } from "drizzle-orm";
import { openPgliteDatabase } from "../../src/node/database";
import { migrateDatabase } from "../../src/node/migrate";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { createJsonLogger } from "../../src/platform/logger";
import { ledgerInvariants, postTransfer, walletBalance } from "../../src/services/wallet/ledger";
import { useTestDatabase } from "../support/environment";
import { peopleWithCoins } from "../support/ledger";
import { startNeonWsProxy, type NeonWsProxy } from "../support/neon-ws-proxy";
import { serverAddress } from "../support/pg";

const ids = createIdGenerator({ now: () => Date.now() }, webRandom);

/**
 * Hot queries (the transfer, the discovery feed) are named prepared statements: the same handle
 * runs them many times, on one pooled connection or several, and inside transactions. Each driver
 * must parse them once per connection and still answer right, array parameters included.
 */
async function preparedQueriesRepeatedly(db: Db): Promise<void> {
  const lookup = (n: number, words: string[]) =>
    preparedRows<{ next: number; words: string[]; at: string }>(db, sql`select ${n}::int + 1 as next, ${sql.param(words)}::text[] as words, 'x' as at`);
  // Concurrent runs of one shape (several pooled connections each preparing it), then another shape.
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => lookup(i, [`w${i}`, "it's, {odd}"])));
  expect(results.map(([row]) => [row?.next, row?.words])).toEqual(Array.from({ length: 8 }, (_, i) => [i + 1, [`w${i}`, "it's, {odd}"]]));
  expect(await preparedRows(db, sql`select ${"b"}::text as other`)).toEqual([{ other: "b" }]);
  expect(await lookup(41, [])).toEqual([{ next: 42, words: [], at: "x" }]);
}

/** Two new people with wallets, the first awarded `coins`. */
async function aliceAndBob(db: Db, coins: number): Promise<[alice: string, bob: string]> {
  const [alice, bob] = await peopleWithCoins(db, ids, [coins, 0]);
  return [alice as string, bob as string];
}

const transferOn = (on: Parameters<typeof postTransfer>[0], from: string, to: string, amount: number) =>
  postTransfer(on, { id: ids.next("txn"), fromUserId: from, toUserId: to, amount, note: null, at: new Date() }, ids);

async function transfersRepeatedly(db: Db): Promise<void> {
  const [alice, bob] = await aliceAndBob(db, 100);
  const transfer = (from: string, to: string, amount: number, on: Parameters<typeof postTransfer>[0] = db) => transferOn(on, from, to, amount);

  const balances = await Promise.all(Array.from({ length: 6 }, () => transfer(alice, bob, 5)));
  expect(balances.sort((a, b) => b - a)).toEqual([95, 90, 85, 80, 75, 70]);
  expect(await db.transaction((tx) => transfer(bob, alice, 10, tx))).toBe(20);
  await expect(transfer(alice, bob, 1_000)).rejects.toMatchObject({ code: "insufficient_funds" });
  expect((await walletBalance(db, alice))?.balance).toBe(80);
  expect(await ledgerInvariants(db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
}

describe("named prepared statements on each database driver", () => {
  const pgTest = useTestDatabase();
  let proxy: NeonWsProxy;
  const dir = mkdtempSync(join(tmpdir(), "api-ledger-pglite-"));

  beforeAll(async () => {
    proxy = await startNeonWsProxy({ allow: [serverAddress()] });
  });
  afterAll(async () => {
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("node-postgres pool", async () => {
    await preparedQueriesRepeatedly(pgTest.db.database.db);
    await transfersRepeatedly(pgTest.db.database.db);
  });

  it("Neon serverless driver", async () => {
    const neon = createNeonDatabase({ url: pgTest.db.url, wsProxy: `127.0.0.1:${proxy.port}/v2`, insecure: true, webSocketConstructor: WebSocket });
    const session = neon.session();
    try {
      await preparedQueriesRepeatedly(session.db);
      await transfersRepeatedly(session.db);
    } finally {
      await session.release();
      await neon.close();
    }
  });

  it("embedded PGlite", { timeout: 60_000 }, async () => {
    const pglite = await openPgliteDatabase(dir, createJsonLogger({ level: "silent" }));
    try {
      await migrateDatabase(pglite, createJsonLogger({ level: "silent" }));
      await preparedQueriesRepeatedly(pglite.db);
      await transfersRepeatedly(pglite.db);
    } finally {
      await pglite.close();
    }
  });
});

describe("wallet balance updates", () => {
  const pgTest = useTestDatabase();

  it("stay on their page (HOT): no index covers the balance, and the table keeps free space for them", async () => {
    const db = pgTest.db.database.db;
    const [layout] = await queryRows<{ balance_indexes: number; options: string[] | null }>(
      db,
      sql`select (select count(*)::int from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
                   where i.indrelid = 'ledger_accounts'::regclass and a.attname = 'balance') as balance_indexes,
                 (select reloptions from pg_class where oid = 'ledger_accounts'::regclass) as options`,
    );
    expect(layout).toEqual({ balance_indexes: 0, options: ["fillfactor=70"] });

    const [alice, bob] = await aliceAndBob(db, 10);
    // The backend's counters (this transaction's, plus earlier ones not yet reported): every
    // balance update, the transfer's two included, was heap-only.
    const counters = await db.transaction(async (tx) => {
      await transferOn(tx, alice, bob, 3);
      const [row] = await queryRows<{ updated: number; hot: number }>(
        tx as unknown as Db,
        sql`select pg_stat_get_xact_tuples_updated('ledger_accounts'::regclass)::int as updated, pg_stat_get_xact_tuples_hot_updated('ledger_accounts'::regclass)::int as hot`,
      );
      return row;
    });
    expect(counters?.updated).toBeGreaterThanOrEqual(2);
    expect(counters?.hot).toBe(counters?.updated);
  });
});
