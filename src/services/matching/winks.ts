import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { PG, pgError } from "../../db/errors";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { ProfileCard } from "../profiles/card";
import type { Tier } from "../tiers/port";
import type { Tx } from "../wallet/ledger";
import type { NewEvent } from "./events";
import { CARD_COLUMNS, cardFromRow, type CardColumns } from "../profiles/card";
import { assertReachable, inTouchWith } from "../safety/visibility";
import { createMatch, lockPair, viewerPosition, withEvents, type MatchingContext } from "./matches";

/** Winks a standard-tier person may send per UTC day; paid tiers have no cap. */
export const DAILY_WINK_CAP = 10;

export interface WinkSent {
  winkId: string;
  status: "pending";
  toUserId: string;
  message: string | null;
  createdAt: string;
  /** Winks left today on a capped tier; null without a cap. */
  remainingToday: number | null;
}

export const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10);

/** Whole seconds until the next UTC midnight (at least 1). */
export function secondsToUtcMidnight(now: number): number {
  const d = new Date(now);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now) / 1000));
}

export function assertNotSelf(actorId: string, otherId: string, field: string): void {
  if (actorId === otherId) throw new ApiError("invalid_input", "you cannot do this to yourself", { details: [{ path: field, message: "must be someone else" }] });
}

/**
 * Sends a wink inside the caller's transaction, with the pair locked and the recipient checked.
 * The daily count is taken by one conditional upsert in the same transaction: concurrent sends
 * queue on the counter row, the 11th finds it at the cap and gets no row back, and a send that
 * fails later (e.g. a duplicate) rolls its count back with it.
 */
export async function sendWinkInTx(
  m: MatchingContext,
  tx: Tx,
  events: NewEvent[],
  input: { senderId: string; recipientId: string; message: string | null; tier: Tier },
): Promise<WinkSent> {
  const db = tx as unknown as Db;
  const [pending] = await queryRows<{ id: string }>(db, sql`select id from winks where sender_id = ${input.senderId} and recipient_id = ${input.recipientId} and status = 'pending'`);
  if (pending) throw new ApiError("conflict", "you already have a pending wink to this person");
  const [matched] = await queryRows<{ id: string }>(
    db,
    sql`select id from matches where user_low = ${input.senderId < input.recipientId ? input.senderId : input.recipientId}
          and user_high = ${input.senderId < input.recipientId ? input.recipientId : input.senderId} and unmatched_at is null`,
  );
  if (matched) throw new ApiError("conflict", "you are already matched with this person");

  let remainingToday: number | null = null;
  if (input.tier === "standard") {
    const [counted] = await queryRows<{ count: number }>(
      db,
      sql`insert into wink_daily_counts (user_id, day, count) values (${input.senderId}, ${utcDay(m.now)}::date, 1)
          on conflict (user_id, day) do update set count = wink_daily_counts.count + 1
            where wink_daily_counts.count < ${DAILY_WINK_CAP}
          returning count`,
    );
    if (!counted) {
      const retryAfter = secondsToUtcMidnight(m.now);
      // The error answer adds Retry-After from retryAfter.
      throw new ApiError("rate_limit_exceeded", `daily wink limit of ${DAILY_WINK_CAP} reached; upgrade for unlimited winks`, { retryAfter });
    }
    remainingToday = DAILY_WINK_CAP - Number(counted.count);
  }

  const winkId = m.ids.next("wnk");
  const at = new Date(m.now);
  try {
    await tx.execute(
      sql`insert into winks (id, sender_id, recipient_id, message, status, created_at)
          values (${winkId}, ${input.senderId}, ${input.recipientId}, ${input.message}, 'pending', ${at.toISOString()}::timestamptz)`,
    );
  } catch (err) {
    if (pgError(err).code === PG.uniqueViolation) throw new ApiError("conflict", "you already have a pending wink to this person");
    throw err;
  }
  events.push({
    userId: input.recipientId,
    type: "wink.received",
    data: { winkId, userId: input.senderId, message: input.message, createdAt: at.toISOString() },
  });
  return { winkId, status: "pending", toUserId: input.recipientId, message: input.message, createdAt: at.toISOString(), remainingToday };
}

export async function sendWink(m: MatchingContext, senderId: string, input: { toUserId: string; message?: string }, tier: Tier): Promise<WinkSent> {
  assertNotSelf(senderId, input.toUserId, "toUserId");
  return withEvents(m, async (tx, events) => {
    await assertReachable(tx, senderId, input.toUserId);
    await lockPair(tx, senderId, input.toUserId);
    return sendWinkInTx(m, tx, events, { senderId, recipientId: input.toUserId, message: input.message ?? null, tier });
  });
}

interface WinkRow extends Record<string, unknown> {
  id: string;
  sender_id: string;
  recipient_id: string;
  status: string;
}

/**
 * The wink, for its recipient only, with the pair locked and the row re-read under the lock.
 * Anyone else, and the recipient once a block stands between the two, gets 404.
 */
async function winkForRecipient(tx: Tx, winkId: string, actorId: string): Promise<WinkRow> {
  const db = tx as unknown as Db;
  const find = () =>
    queryRows<WinkRow>(
      db,
      sql`select w.id, w.sender_id, w.recipient_id, w.status from winks w
          where w.id = ${winkId} and w.recipient_id = ${actorId} and ${inTouchWith(actorId, sql`w.sender_id`)}`,
    );
  const [first] = await find();
  if (!first) throw new ApiError("not_found", "no such wink");
  await lockPair(tx, first.sender_id, first.recipient_id);
  const [wink] = await find();
  if (!wink) throw new ApiError("not_found", "no such wink");
  if (wink.status !== "pending") throw new ApiError("conflict", `the wink is already ${wink.status}`);
  return wink;
}

export async function acceptWink(m: MatchingContext, actorId: string, winkId: string): Promise<{ winkId: string; status: "accepted"; matchId: string }> {
  return withEvents(m, async (tx, events) => {
    const wink = await winkForRecipient(tx, winkId, actorId);
    const at = new Date(m.now);
    // Settles this wink (and any other pending one between the two) as accepted.
    const match = await createMatch(tx, m.ids, wink.sender_id, wink.recipient_id, at, events);
    await tx.execute(sql`update winks set status = 'accepted', match_id = ${match.matchId}, responded_at = ${at.toISOString()}::timestamptz where id = ${wink.id}`);
    events.push({ userId: wink.sender_id, type: "wink.accepted", data: { winkId: wink.id, matchId: match.matchId, userId: actorId, createdAt: at.toISOString() } });
    return { winkId: wink.id, status: "accepted" as const, matchId: match.matchId };
  });
}

export async function declineWink(m: MatchingContext, actorId: string, winkId: string): Promise<{ winkId: string; status: "declined" }> {
  return withEvents(m, async (tx) => {
    const wink = await winkForRecipient(tx, winkId, actorId);
    await tx.execute(sql`update winks set status = 'declined', responded_at = ${new Date(m.now).toISOString()}::timestamptz where id = ${wink.id}`);
    return { winkId: wink.id, status: "declined" as const };
  });
}

export interface ReceivedWink {
  winkId: string;
  fromUserId: string;
  message: string | null;
  status: "pending";
  createdAt: string;
  profile: ProfileCard | null;
}

/** Pending winks to the caller, newest first (up to `limit`), and how many are pending in all: the badge. */
export async function receivedWinks(m: MatchingContext, userId: string, limit = 100): Promise<{ winks: ReceivedWink[]; count: number }> {
  const visible = sql`w.recipient_id = ${userId} and w.status = 'pending' and ${inTouchWith(userId, sql`w.sender_id`)}`;
  const [rows, [total]] = await Promise.all([
    queryRows<CardColumns & { id: string; sender_id: string; message: string | null; created_at: Date | string }>(
      m.db,
      sql`select w.id, w.sender_id, w.message, w.created_at, ${CARD_COLUMNS}
          from winks w left join profiles p on p.user_id = w.sender_id
          where ${visible} order by w.created_at desc, w.id desc limit ${limit}`,
    ),
    queryRows<{ n: string }>(m.db, sql`select count(*)::text as n from winks w where ${visible}`),
  ]);
  const viewer = await viewerPosition(m.db, userId);
  return {
    winks: rows.map((r) => ({
      winkId: r.id,
      fromUserId: r.sender_id,
      message: r.message,
      status: "pending" as const,
      createdAt: new Date(r.created_at).toISOString(),
      profile: cardFromRow(r, viewer, m.now),
    })),
    count: Number(total?.n ?? 0),
  };
}
