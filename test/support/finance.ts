import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/port";
import { payments } from "../../src/db/tables/payments";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { fixedClock } from "../../src/platform/clock";
import { MINT_ACCOUNT, ensureWallets, postTransaction } from "../../src/services/wallet/ledger";

/**
 * Ledger and payment rows written straight into a test's database at given times, through the
 * ledger's own insert (its triggers keep balances), so finance figures can be checked exactly.
 */
export function financeWriter(db: Db) {
  const ids = createIdGenerator(fixedClock(Date.now()), webRandom);
  const wallets = async (userIds: string[]) => ensureWallets(db, userIds, ids);
  const post = (type: "award" | "transfer" | "funding", at: string, from: string, to: string, amount: number, externalRef?: string) => {
    const id = ids.next("txn");
    return db
      .transaction((tx) => postTransaction(tx, { id, type, at: new Date(at), externalRef, postings: [{ accountId: from, amount: -amount }, { accountId: to, amount }] }))
      .then(() => id);
  };
  return {
    wallets,
    award: (wallet: string, amount: number, at: string) => post("award", at, MINT_ACCOUNT, wallet, amount),
    transfer: (from: string, to: string, amount: number, at: string) => post("transfer", at, from, to, amount),
    /** A funding credit that no payment names. */
    fundingCredit: (wallet: string, amount: number, at: string) => post("funding", at, MINT_ACCOUNT, wallet, amount),
    /**
     * A payment made at `createdAt`; a completed one is credited at `completedAt` to the payer's
     * wallet (`credit` coins, default its own) by a funding transaction it names.
     */
    async payment(p: { userId: string; wallet?: string; provider: string; currency: string; amount: number; coins: number; status: string; createdAt: string; completedAt?: string; credit?: number }) {
      const id = ids.next("pay");
      let ledgerTransactionId: string | null = null;
      const completedAt = p.status === "completed" ? (p.completedAt ?? p.createdAt) : undefined;
      if (completedAt) {
        const at = completedAt;
        ledgerTransactionId = await post("funding", at, MINT_ACCOUNT, p.wallet as string, p.credit ?? p.coins, `payment:${id}`);
      }
      await db.insert(payments).values({
        id,
        provider: p.provider,
        userId: p.userId,
        status: p.status,
        amount: p.amount,
        currency: p.currency,
        coins: p.coins,
        ledgerTransactionId,
        createdAt: new Date(p.createdAt),
        updatedAt: new Date(completedAt ?? p.createdAt),
        completedAt: completedAt ? new Date(completedAt) : null,
      });
      return { id, ledgerTransactionId };
    },
    /** A completed payment whose ledger transaction has no postings at all: the credit is missing. */
    async uncreditedPayment(userId: string, coins: number, at: string) {
      const id = ids.next("pay");
      const txn = ids.next("txn");
      await db.execute(sql`insert into ledger_transactions (id, type, external_ref, created_at) values (${txn}, 'funding', ${`payment:${id}`}, ${new Date(at)})`);
      await db.insert(payments).values({ id, provider: "card-a", userId, status: "completed", amount: coins, currency: "USD", coins, ledgerTransactionId: txn, createdAt: new Date(at), updatedAt: new Date(at), completedAt: new Date(at) });
      return id;
    },
    /** The same credit written a second time into a transaction (a balanced second statement). */
    async doubleCredit(transactionId: string, wallet: string, amount: number, at: string) {
      await db.execute(
        sql`insert into ledger_postings (transaction_id, account_id, amount, balance_after, created_at)
            values (${transactionId}, ${MINT_ACCOUNT}, ${-amount}::bigint, 0, ${new Date(at)}), (${transactionId}, ${wallet}, ${amount}::bigint, 0, ${new Date(at)})`,
      );
    },
  };
}
