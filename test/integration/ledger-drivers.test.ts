import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createNeonDatabase } from "../../src/db/neon";
import type { Db } from "../../src/db/port";
import { users } from "../../src/db/schema";
import { openPgliteDatabase } from "../../src/node/database";
import { migrateDatabase } from "../../src/node/migrate";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { createJsonLogger } from "../../src/platform/logger";
import { MINT_ACCOUNT, ensureWallets, ledgerInvariants, postTransaction, postTransfer, walletBalance } from "../../src/services/wallet/ledger";
import { useTestDatabase } from "../support/environment";
import { startNeonWsProxy, type NeonWsProxy } from "../support/neon-ws-proxy";
import { serverAddress } from "../support/pg";

const ids = createIdGenerator({ now: () => Date.now() }, webRandom);

/**
 * The transfer is a named prepared statement: the same handle runs it many times, on one pooled
 * connection or several, and inside transactions. Each driver must parse it once per connection
 * and still move the right coins.
 */
async function transfersRepeatedly(db: Db): Promise<void> {
  const [alice, bob] = [ids.next("usr"), ids.next("usr")];
  await db.insert(users).values([
    { id: alice, subject: `drv-${alice}` },
    { id: bob, subject: `drv-${bob}` },
  ]);
  const wallets = await ensureWallets(db, [alice, bob], ids);
  await db.transaction((tx) =>
    postTransaction(tx, { id: ids.next("txn"), type: "award", at: new Date(), postings: [{ accountId: MINT_ACCOUNT, amount: -100 }, { accountId: wallets.get(alice)!, amount: 100 }] }),
  );
  const transfer = (from: string, to: string, amount: number, on: Parameters<typeof postTransfer>[0] = db) =>
    postTransfer(on, { id: ids.next("txn"), fromUserId: from, toUserId: to, amount, note: null, at: new Date(), newWalletIds: [ids.next("wal"), ids.next("wal")] });

  const balances = await Promise.all(Array.from({ length: 6 }, () => transfer(alice, bob, 5)));
  expect(balances.sort((a, b) => b - a)).toEqual([95, 90, 85, 80, 75, 70]);
  expect(await db.transaction((tx) => transfer(bob, alice, 10, tx))).toBe(20);
  await expect(transfer(alice, bob, 1_000)).rejects.toMatchObject({ code: "insufficient_funds" });
  expect((await walletBalance(db, alice))?.balance).toBe(80);
  expect(await ledgerInvariants(db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
}

describe("the prepared transfer statement on each database driver", () => {
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
    await transfersRepeatedly(pgTest.db.database.db);
  });

  it("Neon serverless driver", async () => {
    const neon = createNeonDatabase({ url: pgTest.db.url, wsProxy: `127.0.0.1:${proxy.port}/v2`, insecure: true, webSocketConstructor: WebSocket });
    const session = neon.session();
    try {
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
      await transfersRepeatedly(pglite.db);
    } finally {
      await pglite.close();
    }
  });
});
