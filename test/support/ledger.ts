import type { Db } from "../../src/db/port";
import { users } from "../../src/db/schema";
import type { IdGenerator } from "../../src/platform/ids";
import { MINT_ACCOUNT, ensureWallets, postTransaction } from "../../src/services/wallet/ledger";

/**
 * New people straight in the database, one per entry: a number gives them a wallet awarded that
 * many coins from the mint (0: an empty wallet), null no wallet at all.
 */
export async function peopleWithCoins(db: Db, ids: IdGenerator, coins: (number | null)[]): Promise<string[]> {
  const who = coins.map(() => ids.next("usr"));
  await db.insert(users).values(who.map((id) => ({ id, subject: `ledger-${id}` })));
  const wallets = await ensureWallets(db, who.filter((_, i) => coins[i] !== null), ids);
  for (const [i, id] of who.entries()) {
    const amount = coins[i];
    if (!amount) continue;
    await db.transaction((tx) =>
      postTransaction(tx, { id: ids.next("txn"), type: "award", at: new Date(), postings: [{ accountId: MINT_ACCOUNT, amount: -amount }, { accountId: wallets.get(id) as string, amount }] }),
    );
  }
  return who;
}
