import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import type { Tx } from "../wallet/ledger";

/** True when either person blocked the other: then they are hidden from each other everywhere. */
export async function blockedEitherWay(db: Db | Tx, a: string, b: string): Promise<boolean> {
  const rows = await queryRows<{ one: number }>(
    db as Db,
    sql`select 1 as one from blocks where (blocker_id = ${a} and blocked_id = ${b}) or (blocker_id = ${b} and blocked_id = ${a}) limit 1`,
  );
  return rows.length > 0;
}

/**
 * A SQL condition for queries that list other people: true when no block stands between the
 * viewer and the person in `otherColumn`, in either direction.
 */
export function noBlockBetween(viewerId: string, otherColumn: SQL): SQL {
  return sql`not exists (select 1 from blocks b
    where (b.blocker_id = ${viewerId} and b.blocked_id = ${otherColumn})
       or (b.blocker_id = ${otherColumn} and b.blocked_id = ${viewerId}))`;
}
