import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./port";
import { queryRows } from "./rows";

export interface BatchOptions {
  /** Rows per delete statement: a long backlog is cleared in short transactions. */
  batchSize: number;
  /** Statements per run; what is left waits for the next run. */
  maxBatches: number;
}

/** What a retention's caller (a test, mostly) may set; each retention has its own defaults. */
export type PruneOptions = Partial<BatchOptions> & { retentionDays?: number };

/**
 * Deletes in bounded statements until one deletes fewer than `batchSize` rows or `maxBatches`
 * have run, and returns how many rows went. `deleteBatch(limit)` is a DELETE … RETURNING of at
 * most `limit` rows. Safe to run on several instances at once: a row another run deleted first
 * is skipped.
 */
export async function deleteInBatches(db: Db, deleteBatch: (limit: SQL) => SQL, options: BatchOptions): Promise<number> {
  return countedBatches(db, (limit) => sql`with gone as (${deleteBatch(limit)}) select count(*)::int as n from gone`, options);
}

/**
 * Like deleteInBatches, for a batch that has to be a whole statement: one that deletes from
 * several tables in data-modifying WITH clauses, which Postgres allows only at the top level.
 * `batch(limit)` answers one row, `n`, the count of the main rows it deleted (at most `limit`).
 */
export async function countedBatches(db: Db, batch: (limit: SQL) => SQL, options: BatchOptions): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < options.maxBatches; i++) {
    const [row] = await queryRows<{ n: number }>(db, batch(sql`${options.batchSize}::int`));
    const n = row?.n ?? 0;
    deleted += n;
    if (n < options.batchSize) break;
  }
  return deleted;
}
