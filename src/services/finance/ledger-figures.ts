import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { MINT_ACCOUNT, SUBSCRIPTION_REVENUE_ACCOUNT } from "../wallet/ledger";
import type { DayFigures } from "./metrics";
import type { FinanceWindow } from "./window";
import { DAY_MS } from "../../platform/clock";

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

/** Sums of one day's transactions of one type. */
interface DayType {
  day: string;
  type: string;
  transactions: number;
  minted: number;
  revenue: number;
  credited: number;
  unbalanced: number;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The ledger's figures of the window. Closed days (before today, UTC) come from the rollup
 * `finance_ledger_days`, checked against the day's count of ledger transactions read from the time
 * index: the ledger only grows, so an equal count is the same set of transactions, and a day whose
 * count moved (a transaction stamped on it committed late) or that was never rolled up is summed
 * from the ledger again and stored. Today is always summed live.
 */
export async function ledgerFigures(db: Db, w: FinanceWindow, now: number): Promise<LedgerFigures> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const closedEnd = Math.max(w.start.getTime(), Math.min(w.end.getTime(), today));
  const [closed, live] = await Promise.all([closedDays(db, w.start.getTime(), closedEnd), summed(db, closedEnd, w.end.getTime())]);
  return figures(w, [...closed, ...live]);
}

async function closedDays(db: Db, start: number, end: number): Promise<DayType[]> {
  if (start >= end) return [];
  const range = sql`created_at >= ${new Date(start)} and created_at < ${new Date(end)}`;
  const [[total], rolled] = await Promise.all([
    queryRows<{ n: string }>(db, sql`select count(*)::text as n from ledger_transactions where ${range}`),
    queryRows<{ day: string; type: string; transactions: string; minted: string; revenue: string; credited: string; unbalanced: string }>(
      db,
      sql`select to_char(day, 'YYYY-MM-DD') as day, type, transactions::text, minted::text, revenue::text, credited::text, unbalanced::text
          from finance_ledger_days where day >= ${dayOf(start)}::date and day < ${dayOf(end)}::date`,
    ),
  ]);
  const stored = rolled.map((r) => ({ day: r.day, type: r.type, transactions: Number(r.transactions), minted: Number(r.minted), revenue: Number(r.revenue), credited: Number(r.credited), unbalanced: Number(r.unbalanced) }));
  // A day's count now is at least what its rollup counted (transactions are never deleted), so equal
  // totals mean every day is as rolled up, and only a difference needs the per-day counts.
  if (Number(total?.n ?? 0) === stored.reduce((s, r) => s + r.transactions, 0)) return stored;
  const counts = await queryRows<{ day: string; n: string }>(
    db,
    sql`select to_char(day, 'YYYY-MM-DD') as day, n::text as n from (
          select (created_at at time zone 'UTC')::date as day, count(*) as n from ledger_transactions where ${range} group by 1) d`,
  );
  const storedCount = new Map<string, number>();
  for (const r of stored) storedCount.set(r.day, (storedCount.get(r.day) ?? 0) + r.transactions);
  const liveCount = new Map(counts.map((c) => [c.day, Number(c.n)]));
  const stale = [...new Set([...liveCount.keys(), ...storedCount.keys()])].filter((d) => (liveCount.get(d) ?? 0) !== (storedCount.get(d) ?? 0)).sort();
  if (stale.length === 0) return stored;
  // One pass over the span of the stale days (the first read of a window sums all of it once).
  const first = Date.parse(`${stale[0]}T00:00:00Z`);
  const last = Date.parse(`${stale[stale.length - 1]}T00:00:00Z`) + DAY_MS;
  const staleSet = new Set(stale);
  const fresh = (await summed(db, first, last)).filter((r) => staleSet.has(r.day));
  await store(db, stale, fresh);
  return [...stored.filter((r) => !staleSet.has(r.day)), ...fresh];
}

/** Replaces the rollup of the given days; two readers doing it at once write the same rows. */
async function store(db: Db, days: string[], rows: DayType[]): Promise<void> {
  await db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    await t.execute(sql`delete from finance_ledger_days where day = any(${`{${days.join(",")}}`}::date[])`);
    if (rows.length === 0) return;
    // Keys in one order, so two readers storing the same days wait for each other instead of deadlocking.
    const sorted = [...rows].sort((a, b) => (a.day + a.type < b.day + b.type ? -1 : 1));
    const values = sql.join(
      sorted.map((r) => sql`(${r.day}::date, ${r.type}, ${r.transactions}, ${r.minted}, ${r.revenue}, ${r.credited}, ${r.unbalanced}, now())`),
      sql`, `,
    );
    await t.execute(
      sql`insert into finance_ledger_days (day, type, transactions, minted, revenue, credited, unbalanced, computed_at) values ${values}
          on conflict (day, type) do update set transactions = excluded.transactions, minted = excluded.minted, revenue = excluded.revenue,
            credited = excluded.credited, unbalanced = excluded.unbalanced, computed_at = excluded.computed_at`,
    );
  });
}

/**
 * Sums the ledger over [start, end): the transactions by their time index, their postings by the
 * postings' transaction index, per transaction first (so the same pass finds an unbalanced one),
 * then per day and type.
 */
async function summed(db: Db, start: number, end: number): Promise<DayType[]> {
  if (start >= end) return [];
  const rows = await queryRows<{ day: string; type: string; transactions: string; minted: string; revenue: string; credited: string; unbalanced: string }>(
    db,
    sql`with per_txn as (
          select t.type, (t.created_at at time zone 'UTC')::date as day,
                 coalesce(sum(p.amount), 0) as net,
                 coalesce(-sum(p.amount) filter (where p.account_id = ${MINT_ACCOUNT}), 0) as minted,
                 coalesce(sum(p.amount) filter (where p.account_id = ${SUBSCRIPTION_REVENUE_ACCOUNT}), 0) as revenue,
                 coalesce(sum(p.amount) filter (where p.amount > 0 and p.account_id <> ${MINT_ACCOUNT} and p.account_id <> ${SUBSCRIPTION_REVENUE_ACCOUNT}), 0) as credited
          from ledger_transactions t left join ledger_postings p on p.transaction_id = t.id
          where t.created_at >= ${new Date(start)} and t.created_at < ${new Date(end)}
          group by t.id)
        select to_char(day, 'YYYY-MM-DD') as day, type, count(*)::text as transactions, sum(minted)::text as minted, sum(revenue)::text as revenue,
               sum(credited)::text as credited, (count(*) filter (where net <> 0))::text as unbalanced
        from per_txn group by day, type`,
  );
  return rows.map((r) => ({ day: r.day, type: r.type, transactions: Number(r.transactions), minted: Number(r.minted), revenue: Number(r.revenue), credited: Number(r.credited), unbalanced: Number(r.unbalanced) }));
}

function figures(w: FinanceWindow, rows: DayType[]): LedgerFigures {
  const coins = { minted: 0, mintedBySource: {} as Record<string, number>, awarded: 0, fromPayments: 0, fromVouchers: 0, spentOnSubscriptions: 0, transferred: 0, transfers: 0 };
  const series = new Map<string, DayFigures>();
  for (let d = w.start.getTime(); d < w.end.getTime(); d += DAY_MS) {
    const date = dayOf(d);
    series.set(date, { date, paymentsCompleted: 0, coinsReceived: 0, minted: 0, awarded: 0, spentOnSubscriptions: 0, transferred: 0 });
  }
  let unbalancedTransactions = 0;
  for (const r of [...rows].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))) {
    const day = series.get(r.day);
    if (!day) continue;
    unbalancedTransactions += r.unbalanced;
    if (r.minted !== 0) coins.mintedBySource[r.type] = (coins.mintedBySource[r.type] ?? 0) + r.minted;
    coins.minted += r.minted;
    day.minted += r.minted;
    coins.spentOnSubscriptions += r.revenue;
    day.spentOnSubscriptions += r.revenue;
    if (r.type === "award") {
      coins.awarded += r.minted;
      day.awarded += r.minted;
    }
    if (r.type === "funding") coins.fromPayments += r.minted;
    if (r.type === "voucher") coins.fromVouchers += r.minted;
    if (r.type === "transfer") {
      coins.transferred += r.credited;
      coins.transfers += r.transactions;
      day.transferred += r.credited;
    }
  }
  return { coins, unbalancedTransactions, series: [...series.values()] };
}
