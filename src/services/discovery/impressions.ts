import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { deleteInBatches, type BatchOptions } from "../../db/batches";
import type { Logger } from "../../platform/logger";
import { utcDay } from "./feed";
import { DAY_MS } from "../../platform/clock";

/** The impression tables, each keyed by `day`; the viewers table holds one row per card first shown. */
const TABLES = ["profile_impression_viewers", "profile_impressions", "profile_impressions_capped"] as const;

/**
 * Deletes impression rows of days before yesterday and returns how many went. Counts matter only
 * on their own UTC day; yesterday's are kept for the requests that straddle midnight. Without
 * this, the tables would gain a row per profile shown (and per viewer) for every day the
 * platform runs. Run by the scheduled upkeep (the Workers cron trigger, a timer on Node), in
 * bounded batches; several instances may run it at once.
 */
export async function pruneImpressions(db: Db, now: number, options: Partial<BatchOptions> = {}): Promise<number> {
  const before = utcDay(now - DAY_MS);
  const batches = { batchSize: options.batchSize ?? 20_000, maxBatches: options.maxBatches ?? 25 };
  let deleted = 0;
  for (const table of TABLES) {
    const t = sql.identifier(table);
    deleted += await deleteInBatches(
      db,
      (limit) => sql`delete from ${t} where ctid = any(array(select ctid from ${t} where day < ${before}::date limit ${limit})) returning 1`,
      batches,
    );
  }
  return deleted;
}

/** The scheduled upkeep's step (Workers cron, Node timer): prunes, and logs what went when anything did. */
export async function pruneImpressionCounts(db: Db, now: number, logger: Pick<Logger, "info">): Promise<void> {
  const deleted = await pruneImpressions(db, now);
  if (deleted > 0) logger.info("past impressions pruned", { deleted });
}
