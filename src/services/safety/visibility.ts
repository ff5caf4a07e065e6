import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { Tx } from "../wallet/ledger";
import { noBlockBetween } from "./blocks";

/**
 * The one rule for what a member may learn about another member's id: a hidden account, a deleted
 * one and one with a block between the two (either way) answer exactly as an id that does not exist. Every
 * route that acts on another member by id (a transfer, a swipe, a wink, a profile read) asks this
 * module, so none of them can confirm that such an account is there.
 */

/**
 * A SQL condition, true unless the person in `otherColumn` deleted their account: from that moment
 * they are gone for everyone, wherever others met them before (matches, winks), not only where
 * strangers find people.
 */
export function notDeleted(otherColumn: SQL): SQL {
  return sql`not exists (select 1 from users du where du.id = ${otherColumn} and du.deleted_at is not null)`;
}

/**
 * A SQL condition for people the viewer is already in touch with (their matches, the winks they
 * received): shown unless a block stands between the two or the other deleted their account. A
 * hidden profile keeps its matches; hiding is about being found.
 */
export function inTouchWith(viewerId: string, otherColumn: SQL): SQL {
  return sql`${notDeleted(otherColumn)} and ${noBlockBetween(viewerId, otherColumn)}`;
}

/**
 * A SQL condition, true when the person in `otherColumn` may be acted on by the viewer: they have
 * not hidden their profile, not deleted their account, and no block stands between the two. It
 * does not check that the person exists; callers join or look up the user row.
 */
export function visibleTo(viewerId: string, otherColumn: SQL): SQL {
  return sql`not exists (select 1 from profiles hp where hp.user_id = ${otherColumn} and hp.visibility = 'hidden') and ${inTouchWith(viewerId, otherColumn)}`;
}

/** A SQL condition, true when `otherId` is a user the viewer may act on (exists, not deleted, and {@link visibleTo}). */
export function reachableBy(viewerId: string, otherId: string): SQL {
  // The deletion is read from the row already found, not looked up again.
  return sql`exists (select 1 from users ru where ru.id = ${otherId} and ru.deleted_at is null
    and not exists (select 1 from profiles hp where hp.user_id = ru.id and hp.visibility = 'hidden') and ${noBlockBetween(viewerId, sql`ru.id`)})`;
}

/** The answer for an id the viewer may not act on: the same as for an id nobody has. */
export function noSuchMember(what = "user"): ApiError {
  return new ApiError("not_found", `no such ${what}`);
}

/** Throws {@link noSuchMember} unless `otherId` is a user the viewer may act on. */
export async function assertReachable(db: Db | Tx, viewerId: string, otherId: string, what = "user"): Promise<void> {
  const [row] = await queryRows<{ ok: boolean }>(db as Db, sql`select ${reachableBy(viewerId, otherId)} as ok`);
  if (!row?.ok) throw noSuchMember(what);
}
