import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import { decodeTimeCursor, encodeTimeCursor } from "../../platform/time-cursor";
import type { KeyValueStore } from "../../kv/port";
import type { IdGenerator } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import { CARD_COLUMNS, cardFromRow, type CardColumns, type ProfileCard } from "../profiles/card";
import { inTouchWith } from "../safety/visibility";
import type { Tx } from "../wallet/ledger";
import { PAIR_LOCK_CLASS, notify, storeEvents, type NewEvent } from "./events";

/** What the matching services need from the request. */
export interface MatchingContext {
  db: Db;
  kv: KeyValueStore;
  ids: IdGenerator;
  logger: Logger;
  now: number;
}

/**
 * Every change between two people (swipe, wink, accept, decline) first takes this transaction
 * lock on the unordered pair. It serialises them: a like that checks for the other's like sees
 * it even when both were sent in the same millisecond, and an accept racing a mutual like
 * finds the match the other made. The unique index on the pair stays as the last guard.
 */
export async function lockPair(tx: Tx, a: string, b: string): Promise<void> {
  const [low, high] = a < b ? [a, b] : [b, a];
  await tx.execute(sql`select pg_advisory_xact_lock(${PAIR_LOCK_CLASS}, hashtext(${`${low}|${high}`}))`);
}

export interface MatchOutcome {
  matchId: string;
  createdAt: Date;
  /** False when the pair was matched already: then no event is due. */
  created: boolean;
}

/**
 * Matches two people, once. Call with the pair locked. An active match is returned as it is; a
 * match one of them had ended comes back to life (same id, new date). Pending winks between the
 * two are settled as accepted, since the match is what they asked for.
 */
export async function createMatch(tx: Tx, ids: IdGenerator, a: string, b: string, at: Date, events: NewEvent[]): Promise<MatchOutcome> {
  const [low, high] = a < b ? [a, b] : [b, a];
  const db = tx as unknown as Db;
  const [made] = await queryRows<{ id: string; created_at: Date | string }>(
    db,
    sql`insert into matches (id, user_low, user_high, created_at) values (${ids.next("mat")}, ${low}, ${high}, ${at.toISOString()}::timestamptz)
        on conflict (user_low, user_high) do update set unmatched_at = null, unmatched_by = null, created_at = excluded.created_at
          where matches.unmatched_at is not null
        returning id, created_at`,
  );
  if (!made) {
    const [existing] = await queryRows<{ id: string; created_at: Date | string }>(db, sql`select id, created_at from matches where user_low = ${low} and user_high = ${high}`);
    if (!existing) throw new Error("match vanished under the pair lock");
    return { matchId: existing.id, createdAt: new Date(existing.created_at), created: false };
  }
  const createdAt = new Date(made.created_at);
  await tx.execute(
    sql`update winks set status = 'accepted', match_id = ${made.id}, responded_at = ${at.toISOString()}::timestamptz
        where status = 'pending' and ((sender_id = ${a} and recipient_id = ${b}) or (sender_id = ${b} and recipient_id = ${a}))`,
  );
  for (const [me, other] of [
    [a, b],
    [b, a],
  ] as const) {
    events.push({ userId: me, type: "match.created", data: { matchId: made.id, userId: other, createdAt: createdAt.toISOString() } });
  }
  return { matchId: made.id, createdAt, created: true };
}

/**
 * Runs `work` in one transaction; the events it collects are stored at its end, in the same
 * transaction, and their notifications published once it has committed.
 */
export async function withEvents<T>(m: MatchingContext, work: (tx: Tx, events: NewEvent[]) => Promise<T>): Promise<T> {
  const events: NewEvent[] = [];
  const result = await m.db.transaction(async (tx) => {
    events.length = 0; // a retried callback starts clean
    const out = await work(tx, events);
    await storeEvents(tx, events, new Date(m.now));
    return out;
  });
  if (events.length > 0) await notify(m.kv, m.logger, events);
  return result;
}

export interface MatchEntry {
  matchId: string;
  userId: string;
  createdAt: string;
  profile: ProfileCard | null;
}

type MatchRow = CardColumns & { id: string; created_at: Date | string; other: string };

export async function viewerPosition(db: Db, userId: string): Promise<{ latitude: number | null; longitude: number | null } | null> {
  const [row] = await queryRows<{ latitude: number | null; longitude: number | null }>(db, sql`select latitude, longitude from profiles where user_id = ${userId}`);
  return row ? { latitude: row.latitude === null ? null : Number(row.latitude), longitude: row.longitude === null ? null : Number(row.longitude) } : null;
}

/** The caller's current matches, newest first; the other person's card, or null without a profile. */
export async function listMatches(m: MatchingContext, userId: string, limit: number, cursor?: string): Promise<{ matches: MatchEntry[]; nextCursor: string | null }> {
  const after = cursor === undefined ? undefined : decodeTimeCursor(cursor);
  const other = sql`(case when mt.user_low = ${userId} then mt.user_high else mt.user_low end)`;
  const rows = await queryRows<MatchRow>(
    m.db,
    sql`select mt.id, mt.created_at, ${other} as other, ${CARD_COLUMNS}
        from matches mt left join profiles p on p.user_id = ${other}
        where (mt.user_low = ${userId} or mt.user_high = ${userId}) and mt.unmatched_at is null
          and ${inTouchWith(userId, other)}
          ${after ? sql`and (mt.created_at, mt.id) < (${after.at.toISOString()}::timestamptz, ${after.id})` : sql``}
        order by mt.created_at desc, mt.id desc
        limit ${limit + 1}`,
  );
  const viewer = await viewerPosition(m.db, userId);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    matches: page.map((r) => ({ matchId: r.id, userId: r.other, createdAt: new Date(r.created_at).toISOString(), profile: cardFromRow(r, viewer, m.now) })),
    nextCursor: rows.length > limit && last ? encodeTimeCursor(new Date(last.created_at), last.id) : null,
  };
}

/** Ends a match for both people. Someone else's match, an ended one, or one behind a block → 404. */
export async function unmatch(m: MatchingContext, userId: string, matchId: string): Promise<void> {
  const rows = await queryRows<{ id: string }>(
    m.db,
    sql`update matches mt set unmatched_at = ${new Date(m.now).toISOString()}::timestamptz, unmatched_by = ${userId}
        where mt.id = ${matchId} and (mt.user_low = ${userId} or mt.user_high = ${userId}) and mt.unmatched_at is null
          and ${inTouchWith(userId, sql`(case when mt.user_low = ${userId} then mt.user_high else mt.user_low end)`)}
        returning mt.id`,
  );
  if (rows.length === 0) throw new ApiError("not_found", "no such match");
}
