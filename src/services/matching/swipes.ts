import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { PG, pgError } from "../../db/errors";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { Tier } from "../tiers/port";
import { assertReachable } from "../safety/visibility";
import { createMatch, lockPair, withEvents, type MatchingContext } from "./matches";
import { assertNotSelf, sendWinkInTx } from "./winks";

export type SwipeAction = "like" | "pass" | "wink";

export interface SwipeResult {
  action: SwipeAction;
  matched: boolean;
  matchId?: string;
  /** Set when the swipe sent a wink (action "wink" without a match). */
  winkId?: string;
}

/**
 * Records one swipe per ordered pair (a repeat → 409). A like or a wink is interest: when the
 * other person has shown interest already (a like or wink swipe, or a pending wink), the two
 * are matched, once. Otherwise a wink swipe sends a wink, counted in the daily cap. Everything
 * runs under the pair lock, so two people liking each other at the same instant see each
 * other's like and make one match.
 */
export async function swipe(m: MatchingContext, actorId: string, input: { targetUserId: string; action: SwipeAction }, tier: Tier): Promise<SwipeResult> {
  assertNotSelf(actorId, input.targetUserId, "targetUserId");
  const target = input.targetUserId;
  return withEvents(m, async (tx, events) => {
    const db = tx as unknown as Db;
    await assertReachable(tx, actorId, target);
    await lockPair(tx, actorId, target);
    const at = new Date(m.now);
    try {
      await tx.execute(sql`insert into swipes (swiper_id, target_id, action, created_at) values (${actorId}, ${target}, ${input.action}, ${at.toISOString()}::timestamptz)`);
    } catch (err) {
      if (pgError(err).code === PG.uniqueViolation) throw new ApiError("conflict", "you already swiped on this person");
      throw err;
    }
    if (input.action === "pass") return { action: input.action, matched: false };

    // Interest shown before the two were unmatched was used up by that match: an unmatch sticks
    // until both act again (a new wink and its accept). Pending winks are all newer than any match,
    // which settles them.
    const [low, high] = actorId < target ? [actorId, target] : [target, actorId];
    const [interest] = await queryRows<{ one: number }>(
      db,
      sql`select 1 as one where exists (select 1 from swipes s where s.swiper_id = ${target} and s.target_id = ${actorId} and s.action in ('like', 'wink')
                                          and not exists (select 1 from matches m where m.user_low = ${low} and m.user_high = ${high} and m.unmatched_at >= s.created_at))
            or exists (select 1 from winks where sender_id = ${target} and recipient_id = ${actorId} and status = 'pending')
            or exists (select 1 from matches where user_low = ${low} and user_high = ${high} and unmatched_at is null)`,
    );
    if (interest) {
      const match = await createMatch(tx, m.ids, actorId, target, at, events);
      return { action: input.action, matched: true, matchId: match.matchId };
    }
    if (input.action === "wink") {
      const wink = await sendWinkInTx(m, tx, events, { senderId: actorId, recipientId: target, message: null, tier });
      return { action: input.action, matched: false, winkId: wink.winkId };
    }
    return { action: input.action, matched: false };
  });
}
