import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { ApiError } from "../../errors";
import type { Tx } from "../wallet/ledger";
import { noBlockBetween } from "./blocks";

/**
 * The one rule for what a member may learn about another member's id: a hidden account and one
 * with a block between the two (either way) answer exactly as an id that does not exist. Every
 * route that acts on another member by id (a transfer, a swipe, a wink, a profile read) asks this
 * module, so none of them can confirm that such an account is there.
 */

/**
 * A SQL condition, true when the person in `otherColumn` may be acted on by the viewer: they have
 * not hidden their profile and no block stands between the two. It does not check that the person
 * exists; callers join or look up the user row.
 */
export function visibleTo(viewerId: string, otherColumn: SQL): SQL {
  return sql`not exists (select 1 from profiles hp where hp.user_id = ${otherColumn} and hp.visibility = 'hidden') and ${noBlockBetween(viewerId, otherColumn)}`;
}

/** A SQL condition, true when `otherId` is a user the viewer may act on (exists and {@link visibleTo}). */
export function reachableBy(viewerId: string, otherId: string): SQL {
  return sql`exists (select 1 from users ru where ru.id = ${otherId} and ${visibleTo(viewerId, sql`ru.id`)})`;
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
