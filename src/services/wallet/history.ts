import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ledgerPostings } from "../../db/schema";
import { ApiError } from "../../errors";
import type { KeyValueStore } from "../../kv/port";
import type { IdGenerator } from "../../platform/ids";
import type { Tier } from "../tiers/port";
import { ensureWallet, walletBalance, type LedgerTxType } from "./ledger";

export interface Overview {
  walletId: string;
  userId: string;
  balance: number;
  coins: number;
  tier: Tier;
}

export async function overview(db: Db, ids: IdGenerator, userId: string, tier: Tier): Promise<Overview> {
  const walletId = await ensureWallet(db, userId, ids);
  const balance = (await walletBalance(db, userId))?.balance ?? 0;
  return { walletId, userId, balance, coins: balance, tier };
}

export interface HistoryEntry {
  id: string;
  type: LedgerTxType;
  amount: number;
  direction: "credit" | "debit";
  signedAmount: number;
  counterparty: { kind: "user" | "mint" | "subscription_revenue"; userId: string | null; displayName: string | null };
  balanceAfter: number;
  note: string | null;
  createdAt: string;
}

/**
 * Cursors are opaque to clients; inside they hold the place (`seq`) in the caller's wallet of the
 * last entry seen. Cursors handed out before places existed name a posting id (`p:<id>`); they
 * still work, resolved to that posting's place.
 */
type Cursor = { seq: number } | { postingId: number };

export function encodeCursor(seq: number): string {
  return btoa(`s:${seq}`).replace(/=+$/, "");
}

export function decodeCursor(cursor: string): Cursor {
  let text = "";
  try {
    text = atob(cursor);
  } catch {
    // fall through to the error below
  }
  const m = /^([sp]):(\d{1,15})$/.exec(text);
  if (!m) throw badCursor("malformed cursor");
  return m[1] === "s" ? { seq: Number(m[2]) } : { postingId: Number(m[2]) };
}

const badCursor = (message: string) => new ApiError("invalid_input", message, { details: [{ path: "cursor", message: "use the nextCursor of a previous page" }] });

/** The place to page back from: below the cursor's, or past the newest entry. */
async function startBelow(db: Db, walletId: string, cursor: string | undefined): Promise<number> {
  if (cursor === undefined) return Number.MAX_SAFE_INTEGER;
  const decoded = decodeCursor(cursor);
  if ("seq" in decoded) return decoded.seq;
  const [posting] = await db
    .select({ seq: ledgerPostings.seq })
    .from(ledgerPostings)
    .where(and(eq(ledgerPostings.id, decoded.postingId), eq(ledgerPostings.accountId, walletId)));
  if (!posting) throw badCursor("this cursor does not belong to your history; start again without a cursor");
  return posting.seq;
}

/**
 * The caller's own history, newest first, keyset-paged by each posting's place in the wallet
 * (`seq`, migration 0031): the order the balance moved in, so each entry's balanceAfter is the
 * next older one's plus its amount, the newest one's is the balance, and a page never skips an
 * entry that committed while the client paged (such an entry is newer than every page's).
 */
export async function history(db: Db, userId: string, limit: number, cursor?: string): Promise<{ transactions: HistoryEntry[]; nextCursor: string | null }> {
  const wallet = await walletBalance(db, userId);
  if (!wallet) {
    if (cursor !== undefined) decodeCursor(cursor);
    return { transactions: [], nextCursor: null };
  }
  const before = await startBelow(db, wallet.accountId, cursor);
  const rows = await queryRows<{
    seq: string;
    amount: string;
    balance_after: string;
    created_at: Date | string;
    txn_id: string;
    type: LedgerTxType;
    note: string | null;
    cp_kind: HistoryEntry["counterparty"]["kind"] | null;
    cp_user: string | null;
    cp_name: string | null;
  }>(
    db,
    sql`select p.seq::text as seq, p.amount::text as amount, p.balance_after::text as balance_after, p.created_at,
               t.id as txn_id, t.type, t.note, cp.kind as cp_kind, cp.user_id as cp_user, cu.display_name as cp_name
        from ledger_postings p
        join ledger_transactions t on t.id = p.transaction_id
        left join lateral (
          select case when oa.kind = 'wallet' then 'user' else oa.kind end as kind, oa.user_id from ledger_postings o join ledger_accounts oa on oa.id = o.account_id
          where o.transaction_id = p.transaction_id and o.account_id <> p.account_id limit 1
        ) cp on true
        left join users cu on cu.id = cp.user_id
        where p.account_id = ${wallet.accountId} and p.seq < ${before}
        order by p.seq desc
        limit ${limit + 1}`,
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    transactions: page.map((r) => {
      const signed = Number(r.amount);
      return {
        id: r.txn_id,
        type: r.type,
        amount: Math.abs(signed),
        direction: signed > 0 ? "credit" : "debit",
        signedAmount: signed,
        counterparty: { kind: r.cp_kind ?? "mint", userId: r.cp_user, displayName: r.cp_name },
        balanceAfter: Number(r.balance_after),
        note: r.note,
        createdAt: new Date(r.created_at).toISOString(),
      };
    }),
    nextCursor: rows.length > limit && last ? encodeCursor(Number(last.seq)) : null,
  };
}

export interface LeaderboardEntry {
  rank: number;
  userId: string;
  displayName: string;
  coins: number;
}

const LEADERBOARD_TTL_MS = 30_000;

/**
 * Top wallets by coins. Served from the store for up to 30 s: the board is read far more often
 * than it changes in a way anyone would notice. A miss scans the wallets (a top-N sort), since
 * balance carries no index so that transfers update it in place (migration 0017); at a few million
 * wallets, a board table refreshed on a timer would take its place.
 *
 * Members who hid their profile are not on the board. Anyone with a block either way with the
 * viewer is left out of that viewer's page (ranks stay those of the shared board).
 */
export async function leaderboard(db: Db, kv: KeyValueStore, viewerId: string, limit: number, offset: number): Promise<{ entries: LeaderboardEntry[]; nextOffset: number | null }> {
  const [board, blocked] = await Promise.all([sharedBoard(db, kv, limit, offset), blockedWith(db, viewerId)]);
  return blocked.size === 0 ? board : { ...board, entries: board.entries.filter((e) => !blocked.has(e.userId)) };
}

async function blockedWith(db: Db, viewerId: string): Promise<Set<string>> {
  const rows = await queryRows<{ other: string }>(
    db,
    sql`select blocked_id as other from blocks where blocker_id = ${viewerId} union select blocker_id from blocks where blocked_id = ${viewerId}`,
  );
  return new Set(rows.map((r) => r.other));
}

/**
 * The top of the board is one snapshot (the first SNAPSHOT_SIZE places, stored whole for 30 s), so
 * the pages a client walks through in that time come from one ranking: a member who moves while
 * someone pages is neither shown twice nor skipped. Deeper pages are read and cached one by one.
 */
const SNAPSHOT_SIZE = 1_000;
const SNAPSHOT_KEY = "wallet:leaderboard:top";

async function sharedBoard(db: Db, kv: KeyValueStore, limit: number, offset: number): Promise<{ entries: LeaderboardEntry[]; nextOffset: number | null }> {
  if (offset + limit <= SNAPSHOT_SIZE) {
    const top = await topSnapshot(db, kv);
    const entries = top.entries.slice(offset, offset + limit);
    const more = offset + limit < top.entries.length || (top.complete === false && offset + limit === SNAPSHOT_SIZE);
    return { entries, nextOffset: more ? offset + limit : null };
  }
  const cacheKey = `wallet:leaderboard:${offset}:${limit}`;
  const cached = await kv.get(cacheKey).catch(() => null);
  if (cached) return JSON.parse(cached) as { entries: LeaderboardEntry[]; nextOffset: number | null };
  const rows = await boardRows(db, limit + 1, offset);
  const result = { entries: rows.slice(0, limit), nextOffset: rows.length > limit ? offset + limit : null };
  await kv.set(cacheKey, JSON.stringify(result), { ttlMs: LEADERBOARD_TTL_MS }).catch(() => false);
  return result;
}

/** The first SNAPSHOT_SIZE places; `complete` is false when the board goes on past them. */
async function topSnapshot(db: Db, kv: KeyValueStore): Promise<{ entries: LeaderboardEntry[]; complete: boolean }> {
  const cached = await kv.get(SNAPSHOT_KEY).catch(() => null);
  if (cached) return JSON.parse(cached) as { entries: LeaderboardEntry[]; complete: boolean };
  const rows = await boardRows(db, SNAPSHOT_SIZE + 1, 0);
  const snapshot = { entries: rows.slice(0, SNAPSHOT_SIZE), complete: rows.length <= SNAPSHOT_SIZE };
  await kv.set(SNAPSHOT_KEY, JSON.stringify(snapshot), { ttlMs: LEADERBOARD_TTL_MS }).catch(() => false);
  return snapshot;
}

async function boardRows(db: Db, count: number, offset: number): Promise<LeaderboardEntry[]> {
  const rows = await queryRows<{ user_id: string; display_name: string | null; balance: string }>(
    db,
    sql`select a.user_id, u.display_name, a.balance::text as balance
        from ledger_accounts a join users u on u.id = a.user_id
        where a.kind = 'wallet' and a.balance > 0 and u.deleted_at is null
          and not exists (select 1 from profiles p where p.user_id = a.user_id and p.visibility = 'hidden')
        order by a.balance desc, a.user_id asc
        limit ${count} offset ${offset}`,
  );
  return rows.map((r, i) => ({
    rank: offset + i + 1,
    userId: r.user_id,
    displayName: r.display_name ?? `Member ${r.user_id.slice(-6)}`,
    coins: Number(r.balance),
  }));
}
