import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { assertAdmin, type Principal } from "../../auth/principal";
import { financeWindow, type FinanceWindow } from "./window";
import { ledgerFigures, type LedgerFigures } from "./ledger-figures";

export interface Received {
  provider: string;
  currency: string;
  count: number;
  coins: number;
  /** The sum of what payers were asked for, in the provider's unit of `currency`, as a decimal string. */
  amount: string;
}

export interface StatusCounts {
  pending: number;
  completed: number;
  failed: number;
  expired: number;
}

export interface DayFigures {
  date: string;
  paymentsCompleted: number;
  coinsReceived: number;
  minted: number;
  awarded: number;
  spentOnSubscriptions: number;
  transferred: number;
}

export interface FinanceMetrics {
  from: string;
  to: string;
  asOf: string;
  payments: {
    received: Received[];
    /** Payments made in the window, by provider and current status. */
    byProvider: (StatusCounts & { provider: string })[];
    totals: StatusCounts & { coinsReceived: number };
  };
  coins: LedgerFigures["coins"];
  subscriptions: {
    active: { planId: string; count: number }[];
    revenue: { planId: string; charges: number; coins: number }[];
  };
  outstanding: { coins: number; wallets: number };
  reconciliation: {
    ok: boolean;
    ledgerBalanced: boolean;
    balanceSum: number;
    unbalancedTransactions: number;
    paymentsChecked: number;
    missingCredits: number;
    duplicateCredits: number;
    amountMismatches: number;
    creditsWithoutPayment: number;
  };
  series: DayFigures[];
}

const PROVIDERS = ["card-a", "card-b", "crypto", "mobile-money"] as const;
const STATUSES = ["pending", "completed", "failed", "expired"] as const;
const n = (v: unknown) => Number(v ?? 0);
const noCounts = (): StatusCounts => ({ pending: 0, completed: 0, failed: 0, expired: 0 });

/**
 * Finance figures of a window of UTC days, every one computed in SQL from the payments, the ledger
 * and the subscriptions as they are now. The queries run side by side on separate connections; each
 * reads the window through an index on time (docs/design/ledger.md, "Finance metrics").
 */
export async function financeMetrics(db: Db, actor: Principal, query: { from?: string; to?: string }, now: number): Promise<FinanceMetrics> {
  assertAdmin(actor);
  const w = financeWindow(query, now);
  const [received, statuses, ledger, checks, active, revenue, balances] = await Promise.all([
    receivedByProvider(db, w),
    statusCounts(db, w),
    ledgerFigures(db, w, now),
    paymentChecks(db, w),
    queryRows<{ plan_id: string; count: string }>(
      db,
      sql`select pl.id as plan_id, count(s.user_id)::text as count
          from plans pl left join subscriptions s on s.plan_id = pl.id and s.current_period_end > ${new Date(now)}
          where pl.price_coins > 0 group by pl.id, pl.price_coins order by pl.price_coins, pl.id`,
    ),
    queryRows<{ plan_id: string; charges: string; coins: string }>(
      db,
      sql`select pl.id as plan_id, count(c.transaction_id)::text as charges, coalesce(sum(c.coins), 0)::text as coins
          from plans pl left join subscription_charges c on c.plan_id = pl.id and c.created_at >= ${w.start} and c.created_at < ${w.end}
          where pl.price_coins > 0 group by pl.id, pl.price_coins order by pl.price_coins, pl.id`,
    ),
    queryRows<{ wallets: string; outstanding: string; total: string }>(
      db,
      sql`select count(*) filter (where kind = 'wallet')::text as wallets,
                 coalesce(sum(balance) filter (where kind = 'wallet'), 0)::text as outstanding,
                 coalesce(sum(balance), 0)::text as total
          from ledger_accounts`,
    ),
  ]);

  const series = ledger.series;
  for (const r of received.byDay) {
    const d = series.find((s) => s.date === r.date);
    if (d) Object.assign(d, { paymentsCompleted: r.count, coinsReceived: r.coins });
  }
  const totals = { ...noCounts(), coinsReceived: received.groups.reduce((s, g) => s + g.coins, 0) };
  for (const p of statuses) for (const s of STATUSES) totals[s] += p[s];
  const balanceSum = n(balances[0]?.total);
  const ledgerBalanced = balanceSum === 0 && ledger.unbalancedTransactions === 0;
  const reconciliation = { ledgerBalanced, balanceSum, unbalancedTransactions: ledger.unbalancedTransactions, ...checks };
  return {
    from: w.from,
    to: w.to,
    asOf: new Date(now).toISOString(),
    payments: { received: received.groups, byProvider: statuses, totals },
    coins: ledger.coins,
    subscriptions: {
      active: active.map((r) => ({ planId: r.plan_id, count: n(r.count) })),
      revenue: revenue.map((r) => ({ planId: r.plan_id, charges: n(r.charges), coins: n(r.coins) })),
    },
    outstanding: { coins: n(balances[0]?.outstanding), wallets: n(balances[0]?.wallets) },
    reconciliation: {
      ok: ledgerBalanced && checks.missingCredits + checks.duplicateCredits + checks.amountMismatches + checks.creditsWithoutPayment === 0,
      ...reconciliation,
    },
    series,
  };
}

/** Completed payments by their completion time: per provider and currency, and per day. */
async function receivedByProvider(db: Db, w: FinanceWindow) {
  const rows = await queryRows<{ provider: string | null; currency: string | null; day: string | null; count: string; coins: string; amount: string }>(
    db,
    sql`select provider, currency, to_char((completed_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day,
               count(*)::text as count, sum(coins)::text as coins, trim_scale(sum(amount))::text as amount
        from payments
        where status = 'completed' and completed_at >= ${w.start} and completed_at < ${w.end}
        group by grouping sets ((provider, currency), ((completed_at at time zone 'UTC')::date))
        order by provider, currency, day`,
  );
  return {
    groups: rows.filter((r) => r.provider !== null).map((r) => ({ provider: r.provider as string, currency: r.currency as string, count: n(r.count), coins: n(r.coins), amount: r.amount })),
    byDay: rows.filter((r) => r.day !== null).map((r) => ({ date: r.day as string, count: n(r.count), coins: n(r.coins) })),
  };
}

/** Payments made in the window, by provider and the status they have now; every provider listed. */
async function statusCounts(db: Db, w: FinanceWindow): Promise<(StatusCounts & { provider: string })[]> {
  const rows = await queryRows<{ provider: string; status: (typeof STATUSES)[number]; count: string }>(
    db,
    sql`select provider, status, count(*)::text as count from payments
        where created_at >= ${w.start} and created_at < ${w.end} group by provider, status`,
  );
  return PROVIDERS.map((provider) => {
    const counts = noCounts();
    for (const r of rows) if (r.provider === provider) counts[r.status] = n(r.count);
    return { provider, ...counts };
  });
}

/**
 * Every payment completed in the window against the ledger: it must have exactly one credit (a
 * positive posting to the payer's wallet) in the ledger transaction it names, of its coins; and
 * every funding transaction of the window must be named by a completed payment.
 */
async function paymentChecks(db: Db, w: FinanceWindow) {
  const [row] = await queryRows<{ checked: string; missing: string; duplicate: string; mismatch: string; orphan: string }>(
    db,
    sql`with checked as (
          select p.coins, c.credits, c.credited
          from payments p
          cross join lateral (
            select count(*) as credits, coalesce(sum(lp.amount), 0) as credited from ledger_postings lp
            where lp.transaction_id = p.ledger_transaction_id and lp.amount > 0
              and lp.account_id = (select a.id from ledger_accounts a where a.user_id = p.user_id)) c
          where p.status = 'completed' and p.completed_at >= ${w.start} and p.completed_at < ${w.end})
        select count(*)::text as checked,
               count(*) filter (where credits = 0)::text as missing,
               count(*) filter (where credits > 1)::text as duplicate,
               count(*) filter (where credits = 1 and credited <> coins)::text as mismatch,
               -- A probe of the payments' unique index per funding transaction, not a hash of every payment.
               -- Only a completed payment names a ledger transaction (CHECK payments_completed_credited),
               -- so the index alone answers.
               (select count(*) filter (where not exists (select 1 from payments p where p.ledger_transaction_id = t.id))
                 from ledger_transactions t
                 where t.type = 'funding' and t.created_at >= ${w.start} and t.created_at < ${w.end})::text as orphan
        from checked`,
  );
  return {
    paymentsChecked: n(row?.checked),
    missingCredits: n(row?.missing),
    duplicateCredits: n(row?.duplicate),
    amountMismatches: n(row?.mismatch),
    creditsWithoutPayment: n(row?.orphan),
  };
}
