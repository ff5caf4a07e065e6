import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { assertAdmin, type Principal } from "../../auth/principal";
import { MINT_ACCOUNT, SUBSCRIPTION_REVENUE_ACCOUNT } from "./ledger";

export interface MintState {
  totalIssued: number;
  inCirculation: number;
  spentOnSubscriptions: number;
  issuedToday: number;
  bySource: Record<string, number>;
  /** totalIssued = inCirculation + spentOnSubscriptions, straight from the ledger. */
  balanced: boolean;
  asOf: string;
}

/** Coin supply, computed from the ledger so it always agrees with the balances. */
export async function mintState(db: Db, actor: Principal, now: number): Promise<MintState> {
  assertAdmin(actor);
  const today = new Date(now);
  today.setUTCHours(0, 0, 0, 0);
  const [balances] = await queryRows<{ mint: string; revenue: string; wallets: string }>(
    db,
    sql`select
          coalesce(sum(balance) filter (where id = ${MINT_ACCOUNT}), 0)::text as mint,
          coalesce(sum(balance) filter (where id = ${SUBSCRIPTION_REVENUE_ACCOUNT}), 0)::text as revenue,
          coalesce(sum(balance) filter (where kind = 'wallet'), 0)::text as wallets
        from ledger_accounts`,
  );
  const sources = await queryRows<{ type: string; issued: string; today: string }>(
    db,
    sql`select t.type, (-sum(p.amount))::text as issued,
               (-coalesce(sum(p.amount) filter (where p.created_at >= ${today}), 0))::text as today
        from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
        where p.account_id = ${MINT_ACCOUNT}
        group by t.type`,
  );
  const totalIssued = -Number(balances?.mint ?? 0);
  const inCirculation = Number(balances?.wallets ?? 0);
  const spentOnSubscriptions = Number(balances?.revenue ?? 0);
  return {
    totalIssued,
    inCirculation,
    spentOnSubscriptions,
    issuedToday: sources.reduce((s, r) => s + Number(r.today), 0),
    bySource: Object.fromEntries(sources.map((r) => [r.type, Number(r.issued)])),
    balanced: totalIssued === inCirculation + spentOnSubscriptions,
    asOf: new Date(now).toISOString(),
  };
}
