import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { PG, pgError } from "../../db/errors";
import { queryRows } from "../../db/rows";
import { ledgerAccounts, ledgerPostings, ledgerTransactions } from "../../db/schema";
import { ApiError } from "../../errors";
import type { IdGenerator } from "../../platform/ids";

/** System accounts seeded by migration 0003. */
export const MINT_ACCOUNT = "sys_mint";
export const SUBSCRIPTION_REVENUE_ACCOUNT = "sys_subscription_revenue";

export type LedgerTxType = "transfer" | "award" | "subscription" | "funding";

/** A drizzle transaction handle; the same query API as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** The user's wallet account, created on first use (concurrent first uses meet at the unique index). */
export async function ensureWallet(db: Db | Tx, userId: string, ids: IdGenerator): Promise<string> {
  await db.insert(ledgerAccounts).values({ id: ids.next("wal"), kind: "wallet", userId }).onConflictDoNothing({ target: ledgerAccounts.userId });
  const [row] = await db.select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId));
  if (!row) throw new Error(`wallet of ${userId} missing after insert`);
  return row.id;
}

export interface PostingInput {
  accountId: string;
  amount: number;
}

/**
 * Writes one balanced transaction. The database applies each posting to its account's balance
 * (trigger), refuses a wallet overdraft (CHECK) and an unbalanced transaction (deferred
 * trigger). Postings are inserted in account-id order so concurrent transactions lock accounts
 * in the same order and cannot deadlock. Returns each account's balance after the posting.
 * `at` (the app clock's now) stamps the rows, so reports that cut by day on the app clock (the
 * supply's `issuedToday`) agree with them; the database's own now() is another clock.
 */
export async function postTransaction(
  tx: Tx,
  input: { id: string; type: LedgerTxType; at: Date; note?: string | null; actorUserId?: string | null; externalRef?: string | null; postings: PostingInput[] },
): Promise<Map<string, number>> {
  const sum = input.postings.reduce((s, p) => s + p.amount, 0);
  if (sum !== 0) throw new Error(`unbalanced ledger transaction (${sum})`);
  await tx.insert(ledgerTransactions).values({
    id: input.id,
    type: input.type,
    note: input.note ?? null,
    actorUserId: input.actorUserId ?? null,
    externalRef: input.externalRef ?? null,
    createdAt: input.at,
  });
  const rows = [...input.postings]
    .sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0))
    // balance_after is filled in by the database trigger.
    .map((p) => ({ transactionId: input.id, accountId: p.accountId, amount: p.amount, balanceAfter: 0, createdAt: input.at }));
  try {
    const inserted = await tx.insert(ledgerPostings).values(rows).returning({ accountId: ledgerPostings.accountId, balanceAfter: ledgerPostings.balanceAfter });
    return new Map(inserted.map((r) => [r.accountId, r.balanceAfter]));
  } catch (err) {
    const pg = pgError(err);
    if (pg.code === PG.checkViolation && pg.constraint === "ledger_accounts_wallet_nonnegative") {
      throw new ApiError("insufficient_funds", "not enough coins");
    }
    throw err;
  }
}

export async function walletBalance(db: Db | Tx, userId: string): Promise<{ accountId: string; balance: number } | null> {
  const [row] = await db.select({ accountId: ledgerAccounts.id, balance: ledgerAccounts.balance }).from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId));
  return row ?? null;
}

/** The two ledger invariants, for tests and the supply report. */
export async function ledgerInvariants(db: Db): Promise<{ totalBalance: number; mismatchedAccounts: number }> {
  const [total] = await queryRows<{ total: string }>(db, sql`select coalesce(sum(balance), 0)::text as total from ledger_accounts`);
  const [mismatched] = await queryRows<{ n: string }>(
    db,
    sql`select count(*)::text as n from ledger_accounts a
        where a.balance <> coalesce((select sum(p.amount) from ledger_postings p where p.account_id = a.id), 0)`,
  );
  return { totalBalance: Number(total?.total ?? 0), mismatchedAccounts: Number(mismatched?.n ?? 0) };
}
