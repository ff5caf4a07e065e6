import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { deleteInBatches, type PruneOptions } from "../../db/batches";
import type { Logger } from "../../platform/logger";
import { DAY_MS } from "../../platform/clock";

/**
 * How long a finished workflow run is kept: long enough for support to answer "what was sent to
 * whom" about a quarter's campaigns, where the delivery log of each message is kept 30 days.
 */
export const WORKFLOW_RUN_RETENTION_DAYS = 90;

/**
 * Deletes runs that finished (succeeded, failed, timed out) longer ago than the retention, oldest
 * first, and returns how many went; queued and running runs stay whatever their age. Several
 * instances may run it at once: a row another run deleted first is skipped.
 *
 * Pruning cannot start a run twice. The unique `(workflow_id, event_id)` is what stops a second
 * run of an event, and it only needs to hold while a pass can still read that event: a pass reads
 * events stored since `events_scanned_to` less ten minutes, never more than a day back
 * (run-schedule.ts, EVENT_LOOKBACK_MS), and a run is created after its event. The run must also
 * have been created before the cutoff, because `finished_at` comes from the engine's report and
 * may be earlier than the run itself; so a run that goes is at least 90 days old, and so is its
 * event, long outside any pass.
 *
 * Nothing references a run by foreign key. Its hand-over to the engine settles within its retry
 * schedule (3.5 days; one whose run has ended is failed at its next attempt, unsent) and goes with
 * the outbox's retention after 30 days; if one were still pending, the sender finds the run gone
 * and fails it without sending. The records of the deliveries a run reported go by their own age.
 */
export async function pruneRuns(db: Db, now: number, options: PruneOptions = {}): Promise<number> {
  const cutoff = new Date(now - (options.retentionDays ?? WORKFLOW_RUN_RETENTION_DAYS) * DAY_MS).toISOString();
  // The predicate is workflow_runs_finished_idx's, which serves the order and the bound.
  return deleteInBatches(
    db,
    (limit) => sql`delete from workflow_runs where id = any(array(
        select id from workflow_runs
        where status in ('succeeded', 'failed', 'timed_out') and finished_at < ${cutoff}::timestamptz and created_at < ${cutoff}::timestamptz
        order by finished_at limit ${limit})) returning 1`,
    { batchSize: options.batchSize ?? 5_000, maxBatches: options.maxBatches ?? 20 },
  );
}

/** The scheduled upkeep's step (Workers cron, Node timer): prunes, and logs what went when anything did. */
export async function pruneWorkflowRuns(db: Db, now: number, logger: Pick<Logger, "info">): Promise<void> {
  const deleted = await pruneRuns(db, now);
  if (deleted > 0) logger.info("workflow runs pruned", { deleted });
}
