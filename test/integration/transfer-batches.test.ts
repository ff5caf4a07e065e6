import { eq, inArray } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../src/db/port";
import { blocks, ledgerAccounts, ledgerPostings } from "../../src/db/schema";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { MINT_ACCOUNT, ensureWallets, ledgerInvariants, postTransaction, postTransfer, postTransfers, walletBalance, type TransferPosting } from "../../src/services/wallet/ledger";
import { TransferBatcher } from "../../src/services/wallet/transfer-batcher";
import { useTestDatabase } from "../support/environment";
import { peopleWithCoins } from "../support/ledger";
import { lockWaiters } from "../support/pg";

const ids = createIdGenerator({ now: () => Date.now() }, webRandom);

const people = (db: Db, coins: (number | null)[]) => peopleWithCoins(db, ids, coins);

const move = (from: string, to: string, amount: number): TransferPosting => ({ id: ids.next("txn"), fromUserId: from, toUserId: to, amount, note: null, at: new Date(), newWalletId: ids.next("wal") });

async function balanceOf(db: Db, userId: string): Promise<number | undefined> {
  return (await walletBalance(db, userId))?.balance;
}

describe("transfer batches (ledger_transfer_batch)", () => {
  const t = useTestDatabase();
  const db = () => t.db.database.db;

  it("plays a batch out in order, each transfer with its own answer, ending as one by one would", async () => {
    const [alice, bob, carol, blocker] = await people(db(), [100, 0, null, 50]);
    await db().insert(blocks).values({ blockerId: blocker as string, blockedId: alice as string, createdAt: new Date() });
    const stranger = ids.next("usr");
    const outcomes = await postTransfers(db(), [
      move(alice!, bob!, 60),
      move(bob!, carol!, 50), // spends what the first transfer brought; carol's first wallet
      move(alice!, bob!, 50), // alice has 40 left
      move(alice!, stranger, 1),
      move(alice!, blocker!, 1),
      move(blocker!, alice!, 1), // blocked either way
      move(carol!, alice!, 50),
      move(alice!, carol!, 90),
    ]);
    expect(outcomes).toEqual([
      { balance: 40 },
      { balance: 10 },
      { refusal: "insufficient_funds" },
      { refusal: "not_found" },
      { refusal: "not_found" },
      { refusal: "not_found" },
      { balance: 0 },
      { balance: 0 },
    ]);
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!), await balanceOf(db(), blocker!)]).toEqual([0, 10, 90, 50]);
    // Each posting's balance_after is the balance the one-by-one run leaves at that point.
    const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
    const history = await db().select({ amount: ledgerPostings.amount, after: ledgerPostings.balanceAfter }).from(ledgerPostings).where(eq(ledgerPostings.accountId, wallet!.id)).orderBy(ledgerPostings.id);
    expect(history).toEqual([
      { amount: 100, after: 100 },
      { amount: -60, after: 40 },
      { amount: 50, after: 90 },
      { amount: -90, after: 0 },
    ]);
    expect(await db().select().from(ledgerAccounts).where(inArray(ledgerAccounts.userId, [stranger]))).toEqual([]);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });

  it("refuses a malformed transfer by refusing the whole statement", async () => {
    const [alice, bob] = await people(db(), [10, 0]);
    await expect(postTransfers(db(), [move(alice!, bob!, 1), move(alice!, bob!, 0)])).rejects.toMatchObject({ cause: { code: "22023" } });
    await expect(postTransfers(db(), [move(alice!, alice!, 1)])).rejects.toMatchObject({ cause: { code: "22023" } });
    expect(await balanceOf(db(), alice!)).toBe(10);
  });

  it("lets the posting trigger refuse a batch whose sender was spent from while it waited, and answers a lone transfer insufficient_funds", async () => {
    const [alice, bob, carol] = await people(db(), [100, 0, 0]);
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      // Another transaction spends 80 of alice's 100 and holds her wallet until it commits. The
      // batch reads her 100 (the committed balance), accepts, and then waits on her row.
      const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
      const [bobWallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, bob!));
      await locker.query("begin");
      const txn = ids.next("txn");
      await locker.query("insert into ledger_transactions (id, type, created_at) values ($1, 'transfer', now())", [txn]);
      await locker.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ($1, $2, -80, 0), ($1, $3, 80, 0)", [txn, wallet!.id, bobWallet!.id]);

      const lone = postTransfer(db(), move(alice!, carol!, 50)).then((b) => b, (e: unknown) => e);
      const batch = postTransfers(db(), [move(alice!, carol!, 50), move(bob!, carol!, 1)]).then((b) => b, (e: unknown) => e);
      await vi.waitFor(async () => expect(await lockWaiters(locker)).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 25 });
      await locker.query("commit");
      expect(await lone).toMatchObject({ code: "insufficient_funds" });
      expect(await batch).toMatchObject({ cause: { code: "23514", constraint: "ledger_accounts_wallet_nonnegative" } });
    } finally {
      await locker.end();
    }
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!)]).toEqual([20, 80, 0]);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });

  it("waits at most 2 s for a wallet another transaction holds: the batch is tried alone, and only the busy wallet's transfer is answered 503", { timeout: 20_000 }, async () => {
    const [alice, bob, carol, dave] = await people(db(), [100, 0, 0, 100]);
    const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query("begin");
      await locker.query("select id from ledger_accounts where id = $1 for update", [wallet!.id]);
      const batcher = new TransferBatcher((items) => postTransfers(db(), items));
      const started = Date.now();
      const first = batcher.submit(move(dave!, carol!, 1));
      // These two arrive while the first is in the database, so they leave together.
      const busy = batcher.submit(move(alice!, bob!, 1)).then((a) => a, (e: unknown) => e);
      const free = batcher.submit(move(dave!, carol!, 2)).then((a) => ({ ...a, at: Date.now() - started }));
      expect(await first).toEqual({ balance: 99 });
      const freed = await free;
      expect(freed).toMatchObject({ balance: 97 });
      expect(freed.at).toBeGreaterThanOrEqual(1_900);
      expect(await busy).toMatchObject({ code: "service_unavailable", status: 503 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(3_800);
    } finally {
      await locker.query("rollback");
      await locker.end();
    }
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!), await balanceOf(db(), dave!)]).toEqual([100, 0, 3, 97]);
  });

  it("never deadlocks: batches, lone transfers in transactions and awards over the same wallets at once", async () => {
    const crowd = await people(db(), [1000, 1000, 1000, 1000, 1000, 1000]);
    const pick = () => crowd[Math.floor(Math.random() * crowd.length)] as string;
    const pair = (): [string, string] => {
      const from = pick();
      let to = pick();
      while (to === from) to = pick();
      return [from, to];
    };
    const wallets = await ensureWallets(db(), crowd, ids);
    let moved = 0;
    for (let round = 0; round < 15; round++) {
      const work: Promise<unknown>[] = [];
      for (let b = 0; b < 4; b++) {
        work.push(
          postTransfers(
            db(),
            Array.from({ length: 8 }, () => move(...pair(), 1)),
          ).then((outcomes) => (moved += outcomes.filter((o) => o.balance !== undefined).length)),
        );
      }
      work.push(db().transaction((tx) => postTransfer(tx, move(...pair(), 1))).then(() => moved++));
      const lucky = pick();
      work.push(db().transaction((tx) => postTransaction(tx, { id: ids.next("txn"), type: "award", at: new Date(), postings: [{ accountId: MINT_ACCOUNT, amount: -1 }, { accountId: wallets.get(lucky) as string, amount: 1 }] })));
      // A deadlock would fail one of these with 40P01 (after deadlock_timeout).
      await Promise.all(work);
    }
    expect(moved).toBe(15 * (4 * 8 + 1));
    const balances = await Promise.all(crowd.map((u) => balanceOf(db(), u)));
    expect(balances.reduce<number>((sum, b) => sum + (b ?? 0), 0)).toBe(6000 + 15);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });

  it("batcher: what arrives while a batch is in the database leaves together, and each caller gets its own balance", async () => {
    const [alice, bob] = await people(db(), [1000, 0]);
    const sizes: number[] = [];
    const batcher = new TransferBatcher((items) => {
      sizes.push(items.length);
      return postTransfers(db(), items);
    });
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => batcher.submit(move(alice!, bob!, i + 1))));
    expect(sizes).toEqual([1, 19]);
    // In arrival order, alice's balance after each is 1000 minus the running total.
    let left = 1000;
    expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => ({ balance: (left -= i + 1) })));
    expect(await balanceOf(db(), bob!)).toBe(210);
  });
});
