import { eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { PG, pgError } from "../../db/errors";
import { preparedRows, queryRows } from "../../db/rows";
import { ledgerAccounts, ledgerPostings, ledgerTransactions } from "../../db/schema";
import { ApiError } from "../../errors";
import { noSuchMember, reachableBy } from "../safety/visibility";
import type { IdGenerator } from "../../platform/ids";

/** System accounts seeded by migration 0003. */
export const MINT_ACCOUNT = "sys_mint";
export const SUBSCRIPTION_REVENUE_ACCOUNT = "sys_subscription_revenue";

export type LedgerTxType = "transfer" | "award" | "subscription" | "funding" | "voucher" | "forfeiture";

/** A drizzle transaction handle; the same query API as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * The users' wallet accounts, created on first use, in one round trip. Concurrent first uses
 * meet at the unique index. An unknown user id answers 404 (the foreign key refuses it).
 */
export async function ensureWallets(db: Db | Tx, userIds: string[], ids: IdGenerator): Promise<Map<string, string>> {
  const input = sql.join(
    userIds.map((u) => sql`(${u}, ${ids.next("wal")})`),
    sql`, `,
  );
  let rows: { id: string; user_id: string }[];
  try {
    // The second SELECT reads the statement's snapshot: it finds wallets that already existed,
    // and RETURNING gives the ones this statement created.
    rows = await queryRows(
      db as Db,
      sql`with input(user_id, new_id) as (values ${input}),
          created as (
            insert into ledger_accounts (id, kind, user_id) select new_id, 'wallet', user_id from input
            on conflict (user_id) do nothing returning id, user_id)
          select id, user_id from created
          union all
          select a.id, a.user_id from ledger_accounts a join input i on i.user_id = a.user_id`,
    );
  } catch (err) {
    if (pgError(err).code === PG.foreignKeyViolation) throw new ApiError("not_found", "no such user");
    throw err;
  }
  const wallets = new Map(rows.map((r) => [r.user_id, r.id]));
  const missing = userIds.filter((u) => !wallets.has(u));
  // A wallet another transaction created after this statement's snapshot: read it afresh.
  if (missing.length > 0) {
    const late = await db.select({ id: ledgerAccounts.id, userId: ledgerAccounts.userId }).from(ledgerAccounts).where(inArray(ledgerAccounts.userId, missing));
    for (const r of late) if (r.userId) wallets.set(r.userId, r.id);
  }
  for (const u of userIds) if (!wallets.has(u)) throw new Error(`wallet of ${u} missing after insert`);
  return wallets;
}

export async function ensureWallet(db: Db | Tx, userId: string, ids: IdGenerator): Promise<string> {
  return (await ensureWallets(db, [userId], ids)).get(userId) as string;
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
  const ordered = [...input.postings].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
  const values = sql.join(
    ordered.map((p, i) => sql`(${p.accountId}, ${p.amount}::bigint, ${i})`),
    sql`, `,
  );
  try {
    // One round trip: the transaction row, then its postings in account-id order (which is the
    // order the trigger locks the accounts in). balance_after is filled in by the trigger.
    const rows = await queryRows<{ account_id: string; balance_after: string }>(
      tx as unknown as Db,
      sql`with txn as (
            insert into ledger_transactions (id, type, note, actor_user_id, external_ref, created_at)
            values (${input.id}, ${input.type}, ${input.note ?? null}, ${input.actorUserId ?? null}, ${input.externalRef ?? null}, ${input.at})
            returning id)
          insert into ledger_postings (transaction_id, account_id, amount, balance_after, created_at)
          select txn.id, v.account_id, v.amount, 0, ${input.at}
          from txn, (values ${values}) as v(account_id, amount, ord)
          order by v.ord
          returning account_id, balance_after::text as balance_after`,
    );
    return new Map(rows.map((r) => [r.account_id, Number(r.balance_after)]));
  } catch (err) {
    ledgerRefusal(err);
  }
}

function isOverdraft(err: unknown): boolean {
  const pg = pgError(err);
  return pg.code === PG.checkViolation && pg.constraint === "ledger_accounts_wallet_nonnegative";
}

/** Maps the database's refusals of a posting to the API's answers. */
function ledgerRefusal(err: unknown): never {
  if (isOverdraft(err)) throw new ApiError("insufficient_funds", "not enough coins");
  const pg = pgError(err);
  if (pg.code === PG.foreignKeyViolation) throw noSuchMember();
  if (pg.code === PG.lockNotAvailable) {
    throw new ApiError("service_unavailable", "a wallet of this transfer is busy; retry shortly", { cause: err, headers: { "retry-after": "1" } });
  }
  throw err;
}

/** One transfer between two people. */
export interface TransferInput {
  id: string;
  fromUserId: string;
  toUserId: string;
  amount: number;
  note: string | null;
  at: Date;
}

/**
 * One transfer through ledger_transfer() (migrations 0007, 0021 and the one that dropped the batch
 * function): a single statement, so outside a transaction it is its own, one round trip and one
 * commit; inside one it commits with it. Returns the sender's balance after it. The function
 * creates a first wallet where one is missing, refuses an unknown recipient and people of whom
 * one blocked the other (404: a transfer's note is a message), and waits at most 2 s for a wallet
 * another transaction holds (503, retry); the posting trigger refuses an overdraft (422). A named
 * prepared statement, so each pooled connection parses it once. The same statement first asks the
 * shared visibility rule (safety/visibility.ts): a hidden recipient, or one with a block between the
 * two, answers the 404 of an unknown id and the function is never called.
 */
export async function postTransfer(db: Db | Tx, input: TransferInput, ids: IdGenerator): Promise<number> {
  try {
    const [row] = await preparedRows<{ balance: string }>(
      db as Db,
      sql`select case when ${reachableBy(input.fromUserId, input.toUserId)}
          then ledger_transfer(${input.id}, ${input.fromUserId}, ${input.toUserId}, ${input.amount}::bigint, ${input.note}, ${input.at}::timestamptz, ${ids.next("wal")}, ${ids.next("wal")})::text
          end as balance`,
    );
    if (row?.balance == null) throw noSuchMember();
    return Number(row.balance);
  } catch (err) {
    ledgerRefusal(err);
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
