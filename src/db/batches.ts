import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./port";
import { queryRows } from "./rows";

export interface BatchOptions {
  /** Rows per delete statement: a long backlog is cleared in short transactions. */
  batchSize: number;
  /** Statements per run; what is left waits for the next run. */
  maxBatches: number;
}

/**
 * Deletes in bounded statements until one deletes fewer than `batchSize` rows or `maxBatches`
 * have run, and returns how many rows went. `deleteBatch(limit)` is a DELETE … RETURNING of at
 * most `limit` rows. Safe to run on several instances at once: a row another run deleted first
 * is skipped.
 */
export async function deleteInBatches(db: Db, deleteBatch: (limit: SQL) => SQL, options: BatchOptions): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < options.maxBatches; batch++) {
    const [row] = await queryRows<{ n: number }>(db, sql`with gone as (${deleteBatch(sql`${options.batchSize}::int`)}) select count(*)::int as n from gone`);
    const n = row?.n ?? 0;
    deleted += n;
    if (n < options.batchSize) break;
  }
  return deleted;
}
