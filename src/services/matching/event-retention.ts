import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { deleteInBatches, type PruneOptions } from "../../db/batches";
import type { Logger } from "../../platform/logger";
import { DAY_MS } from "../../platform/clock";

/**
 * How long the live-event outbox keeps an event. A stream that reconnects with an older
 * Last-Event-ID gets every event still kept after it; the app reads matches and winks from their
 * own routes when it opens, so events this old only ever served a replay nobody asked for.
 */
export const EVENT_RETENTION_DAYS = 30;

/**
 * Deletes outbox events older than the retention, oldest first, and returns how many went. Run by
 * the scheduled upkeep (the Workers cron trigger, a timer on Node); several instances may run it
 * at once, since a row another run deleted first is simply skipped.
 */
export async function pruneEvents(db: Db, now: number, options: PruneOptions = {}): Promise<number> {
  const cutoff = new Date(now - (options.retentionDays ?? EVENT_RETENTION_DAYS) * DAY_MS);
  return deleteInBatches(
    db,
    (limit) => sql`delete from events where id in (
      select id from events where created_at < ${cutoff.toISOString()}::timestamptz order by created_at limit ${limit}) returning 1`,
    { batchSize: options.batchSize ?? 5_000, maxBatches: options.maxBatches ?? 20 },
  );
}

/** The scheduled upkeep's step (Workers cron, Node timer): prunes, and logs what went when anything did. */
export async function pruneEventOutbox(db: Db, now: number, logger: Pick<Logger, "info">): Promise<void> {
  const deleted = await pruneEvents(db, now);
  if (deleted > 0) logger.info("event outbox pruned", { deleted });
}
