import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { MINT_ACCOUNT, SUBSCRIPTION_REVENUE_ACCOUNT } from "../wallet/ledger";
import type { DayFigures } from "./metrics";
import type { FinanceWindow } from "./window";

export interface LedgerFigures {
  coins: {
    /** Coins that left the mint: funding credits, awards and vouchers. */
    minted: number;
    mintedBySource: Record<string, number>;
    awarded: number;
    fromPayments: number;
    fromVouchers: number;
    spentOnSubscriptions: number;
    transferred: number;
    transfers: number;
  };
  /** Transactions of the window whose postings do not sum to zero. */
  unbalancedTransactions: number;
  /** One entry per day of the window, zeros included; payment figures are filled in by the caller. */
  series: DayFigures[];
}

/**
 * The window's ledger transactions (by the transactions' time index) with their postings (by the
 * postings' transaction index), summed per transaction first, so the same pass tells an unbalanced
 * transaction, then per day and type.
 */
export async function ledgerFigures(db: Db, w: FinanceWindow): Promise<LedgerFigures> {
  const rows = await queryRows<{ day: string; type: string | null; minted: string; revenue: string; credited: string; txns: string; unbalanced: string }>(
    db,
    sql`with per_txn as (
          select t.type, (t.created_at at time zone 'UTC')::date as day,
                 sum(p.amount) as net,
                 coalesce(-sum(p.amount) filter (where p.account_id = ${MINT_ACCOUNT}), 0) as minted,
                 coalesce(sum(p.amount) filter (where p.account_id = ${SUBSCRIPTION_REVENUE_ACCOUNT}), 0) as revenue,
                 coalesce(sum(p.amount) filter (where p.amount > 0 and p.account_id <> ${MINT_ACCOUNT} and p.account_id <> ${SUBSCRIPTION_REVENUE_ACCOUNT}), 0) as credited
          from ledger_transactions t join ledger_postings p on p.transaction_id = t.id
          where t.created_at >= ${w.start} and t.created_at < ${w.end}
          group by t.id),
        per_day as (
          select day, type, sum(minted) as minted, sum(revenue) as revenue, sum(credited) as credited,
                 count(*) as txns, count(*) filter (where net <> 0) as unbalanced
          from per_txn group by day, type)
        select to_char(d.day, 'YYYY-MM-DD') as day, x.type,
               coalesce(x.minted, 0)::text as minted, coalesce(x.revenue, 0)::text as revenue,
               coalesce(x.credited, 0)::text as credited, coalesce(x.txns, 0)::text as txns,
               coalesce(x.unbalanced, 0)::text as unbalanced
        from generate_series(${w.start}::timestamptz at time zone 'UTC', ${w.end}::timestamptz at time zone 'UTC' - interval '1 day', interval '1 day') as d(day)
        left join per_day x on x.day = d.day::date
        order by d.day, x.type`,
  );
  const coins = { minted: 0, mintedBySource: {} as Record<string, number>, awarded: 0, fromPayments: 0, fromVouchers: 0, spentOnSubscriptions: 0, transferred: 0, transfers: 0 };
  const series = new Map<string, DayFigures>();
  let unbalancedTransactions = 0;
  for (const r of rows) {
    const day = series.get(r.day) ?? { date: r.day, paymentsCompleted: 0, coinsReceived: 0, minted: 0, awarded: 0, spentOnSubscriptions: 0, transferred: 0 };
    series.set(r.day, day);
    if (r.type === null) continue;
    const [minted, revenue, credited] = [Number(r.minted), Number(r.revenue), Number(r.credited)];
    unbalancedTransactions += Number(r.unbalanced);
    if (minted !== 0) coins.mintedBySource[r.type] = (coins.mintedBySource[r.type] ?? 0) + minted;
    coins.minted += minted;
    day.minted += minted;
    coins.spentOnSubscriptions += revenue;
    day.spentOnSubscriptions += revenue;
    if (r.type === "award") {
      coins.awarded += minted;
      day.awarded += minted;
    }
    if (r.type === "funding") coins.fromPayments += minted;
    if (r.type === "voucher") coins.fromVouchers += minted;
    if (r.type === "transfer") {
      coins.transferred += credited;
      coins.transfers += Number(r.txns);
      day.transferred += credited;
    }
  }
  return { coins, unbalancedTransactions, series: [...series.values()] };
}
