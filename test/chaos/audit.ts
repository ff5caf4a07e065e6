import type pg from "pg";

/** What a client learnt about one transfer it asked for. */
export interface TransferOp {
  note: string;
  keyed: boolean;
  /** acked: 200; refused: a 4xx that says nothing moved; unknown: the client cannot tell. */
  outcome: "acked" | "refused" | "unknown";
  /** The sender's balance in the 200 answer. */
  balance?: number;
}

export interface Audit {
  failures: string[];
  facts: Record<string, number>;
}

/**
 * The ledger after the storm, against what the clients were told: nothing created or lost, no
 * wallet below zero, each account's history a gap-free chain of balances, every acknowledged
 * transfer in the ledger exactly once with the balance its answer gave, every refused one absent,
 * and nothing, keyed or not, applied twice.
 */
export async function auditLedger(c: pg.Client, ops: TransferOp[], inWallets: number): Promise<Audit> {
  const failures: string[] = [];
  const one = async (text: string, values: unknown[] = []) => (await c.query<Record<string, string>>(text, values)).rows[0] ?? {};

  const totals = await one(`select coalesce(sum(balance), 0)::text as total,
      coalesce(sum(balance) filter (where kind = 'wallet'), 0)::text as wallets,
      count(*) filter (where kind = 'wallet' and balance < 0)::text as negative,
      count(*) filter (where balance <> coalesce((select sum(p.amount) from ledger_postings p where p.account_id = a.id), 0))::text as drifted,
      count(*) filter (where last_seq <> coalesce((select max(p.seq) from ledger_postings p where p.account_id = a.id), 0))::text as misplaced
    from ledger_accounts a`);
  if (totals.total !== "0") failures.push(`balances sum to ${totals.total}, not 0`);
  if (Number(totals.wallets) !== inWallets) failures.push(`wallets hold ${totals.wallets} coins, not ${inWallets}`);
  if (totals.negative !== "0") failures.push(`${totals.negative} wallets below zero`);
  if (totals.drifted !== "0") failures.push(`${totals.drifted} accounts whose balance is not the sum of their postings`);
  if (totals.misplaced !== "0") failures.push(`${totals.misplaced} accounts whose last_seq is not their newest posting's`);

  const chain = await one(`select count(*)::text as broken from (
      select seq, row_number() over w as place, balance_after, amount, lag(balance_after, 1, 0::bigint) over w as before
      from ledger_postings window w as (partition by account_id order by seq)) x
    where seq <> place or balance_after <> before + amount`);
  if (chain.broken !== "0") failures.push(`${chain.broken} postings out of their account's chain of balances`);

  const { rows } = await c.query<{ note: string; n: string; sender_balance: string }>(
    `select t.note, count(distinct t.id)::text as n, min(p.balance_after)::text as sender_balance
     from ledger_transactions t join ledger_postings p on p.transaction_id = t.id and p.amount < 0
     where t.note like 'chaos:%' group by t.note`,
  );
  const inLedger = new Map(rows.map((r) => [r.note, { n: Number(r.n), balance: Number(r.sender_balance) }]));
  const facts: Record<string, number> = { transfersInLedger: rows.reduce((s, r) => s + Number(r.n), 0) };
  for (const op of ops) {
    const found = inLedger.get(op.note);
    const n = found?.n ?? 0;
    if (n > 1) failures.push(`${op.note} (${op.keyed ? "keyed" : "unkeyed"}) is in the ledger ${n} times`);
    if (op.outcome === "acked" && n !== 1) failures.push(`${op.note} was acknowledged but is in the ledger ${n} times`);
    if (op.outcome === "acked" && found && found.balance !== op.balance) failures.push(`${op.note} answered balance ${op.balance}, the ledger says ${found.balance}`);
    if (op.outcome === "refused" && n !== 0) failures.push(`${op.note} was refused but is in the ledger`);
    if (op.outcome === "unknown") facts[n === 1 ? "unknownApplied" : "unknownNotApplied"] = (facts[n === 1 ? "unknownApplied" : "unknownNotApplied"] ?? 0) + 1;
  }
  const asked = new Set(ops.map((o) => o.note));
  for (const note of inLedger.keys()) if (!asked.has(note)) failures.push(`${note} is in the ledger but no client asked for it`);
  return { failures, facts };
}
