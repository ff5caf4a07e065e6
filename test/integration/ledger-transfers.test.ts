import { eq, inArray } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../src/db/port";
import { blocks, ledgerAccounts, ledgerPostings } from "../../src/db/schema";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { MINT_ACCOUNT, ensureWallets, ledgerInvariants, postTransaction, postTransfer, walletBalance, type TransferInput, type Tx } from "../../src/services/wallet/ledger";
import { useTestDatabase } from "../support/environment";
import { peopleWithCoins } from "../support/ledger";
import { lockWaiters } from "../support/pg";

const ids = createIdGenerator({ now: () => Date.now() }, webRandom);

const people = (db: Db, coins: (number | null)[]) => peopleWithCoins(db, ids, coins);

const move = (from: string, to: string, amount: number): TransferInput => ({ id: ids.next("txn"), fromUserId: from, toUserId: to, amount, note: null, at: new Date() });

/** A transfer as the API makes it, its answer or its error (never thrown). */
const send = (on: Db | Tx, from: string, to: string, amount: number) => postTransfer(on, move(from, to, amount), ids).then((b) => b, (e: unknown) => e);

async function balanceOf(db: Db, userId: string): Promise<number | undefined> {
  return (await walletBalance(db, userId))?.balance;
}

describe("transfers (ledger_transfer)", () => {
  const t = useTestDatabase();
  const db = () => t.db.database.db;

  it("answers each transfer on its own: the sender's balance, or the refusal, with nothing moved on a refusal", async () => {
    const [alice, bob, carol, blocker] = await people(db(), [100, 0, null, 50]);
    await db().insert(blocks).values({ blockerId: blocker as string, blockedId: alice as string, createdAt: new Date() });
    const stranger = ids.next("usr");
    expect(await send(db(), alice!, bob!, 60)).toBe(40);
    expect(await send(db(), bob!, carol!, 50)).toBe(10); // spends what the first brought; carol's first wallet
    expect(await send(db(), alice!, bob!, 50)).toMatchObject({ code: "insufficient_funds", status: 422 });
    expect(await send(db(), alice!, stranger, 1)).toMatchObject({ code: "not_found", status: 404 });
    expect(await send(db(), alice!, blocker!, 1)).toMatchObject({ code: "not_found", status: 404 });
    expect(await send(db(), blocker!, alice!, 1)).toMatchObject({ code: "not_found", status: 404 }); // blocked either way
    expect(await send(db(), carol!, alice!, 50)).toBe(0);
    expect(await send(db(), alice!, carol!, 90)).toBe(0);
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!), await balanceOf(db(), blocker!)]).toEqual([0, 10, 90, 50]);
    // Each posting's balance_after follows from the one before it, in the wallet's own order.
    const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
    const history = await db().select({ amount: ledgerPostings.amount, after: ledgerPostings.balanceAfter, seq: ledgerPostings.seq }).from(ledgerPostings).where(eq(ledgerPostings.accountId, wallet!.id)).orderBy(ledgerPostings.seq);
    expect(history).toEqual([
      { amount: 100, after: 100, seq: 1 },
      { amount: -60, after: 40, seq: 2 },
      { amount: 50, after: 90, seq: 3 },
      { amount: -90, after: 0, seq: 4 },
    ]);
    expect(await db().select().from(ledgerAccounts).where(inArray(ledgerAccounts.userId, [stranger]))).toEqual([]);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });

  it("refuses a transfer whose sender was spent from while it waited for the wallet", async () => {
    const [alice, bob, carol] = await people(db(), [100, 0, 0]);
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      // Another transaction spends 80 of alice's 100 and holds her wallet until it commits.
      const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
      const [bobWallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, bob!));
      await locker.query("begin");
      const txn = ids.next("txn");
      await locker.query("insert into ledger_transactions (id, type, created_at) values ($1, 'transfer', now())", [txn]);
      await locker.query("insert into ledger_postings (transaction_id, account_id, amount, balance_after) values ($1, $2, -80, 0), ($1, $3, 80, 0)", [txn, wallet!.id, bobWallet!.id]);

      const alone = send(db(), alice!, carol!, 50);
      const inTransaction = db().transaction((tx) => postTransfer(tx, move(alice!, carol!, 30), ids)).then((b) => b, (e: unknown) => e);
      await vi.waitFor(async () => expect(await lockWaiters(locker)).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 25 });
      await locker.query("commit");
      const answers = [await alone, await inTransaction];
      // Of the 20 left, whichever came first could not have 50; the 30 could not either.
      expect(answers).toEqual([expect.objectContaining({ code: "insufficient_funds" }), expect.objectContaining({ code: "insufficient_funds" })]);
    } finally {
      await locker.end();
    }
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!)]).toEqual([20, 80, 0]);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });

  it("waits at most 2 s for a wallet another transaction holds, answering 503, while other transfers go on", { timeout: 20_000 }, async () => {
    // Bob has the coin he sends, so his transfer waits for alice's wallet whichever of the two
    // wallets it locks first (refusing him for want of coins would need no lock on hers).
    const [alice, bob, carol, dave] = await people(db(), [100, 1, 0, 100]);
    const [wallet] = await db().select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, alice!));
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query("begin");
      await locker.query("select id from ledger_accounts where id = $1 for update", [wallet!.id]);
      const started = Date.now();
      const busy = send(db(), alice!, bob!, 1);
      const inTransaction = db().transaction((tx) => postTransfer(tx, move(bob!, alice!, 1), ids)).then((b) => b, (e: unknown) => e);
      expect(await send(db(), dave!, carol!, 1)).toBe(99);
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(await busy).toMatchObject({ code: "service_unavailable", status: 503, headers: { "retry-after": "1" } });
      expect(await inTransaction).toMatchObject({ code: "service_unavailable", status: 503 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    } finally {
      await locker.query("rollback");
      await locker.end();
    }
    expect([await balanceOf(db(), alice!), await balanceOf(db(), bob!), await balanceOf(db(), carol!), await balanceOf(db(), dave!)]).toEqual([100, 1, 1, 99]);
  });

  it("never deadlocks: transfers alone and in transactions, and awards, over the same wallets at once", async () => {
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
      for (let i = 0; i < 8; i++) work.push(postTransfer(db(), move(...pair(), 1), ids).then(() => moved++));
      for (let i = 0; i < 2; i++) work.push(db().transaction((tx) => postTransfer(tx, move(...pair(), 1), ids)).then(() => moved++));
      const lucky = pick();
      work.push(db().transaction((tx) => postTransaction(tx, { id: ids.next("txn"), type: "award", at: new Date(), postings: [{ accountId: MINT_ACCOUNT, amount: -1 }, { accountId: wallets.get(lucky) as string, amount: 1 }] })));
      // A deadlock would fail one of these with 40P01 (after deadlock_timeout).
      await Promise.all(work);
    }
    expect(moved).toBe(15 * 10);
    const balances = await Promise.all(crowd.map((u) => balanceOf(db(), u)));
    expect(balances.reduce<number>((sum, b) => sum + (b ?? 0), 0)).toBe(6000 + 15);
    expect(await ledgerInvariants(db())).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
  });
});
