import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { countedBatches, deleteInBatches, type PruneOptions } from "../../db/batches";
import type { Logger } from "../../platform/logger";
import { DAY_MS } from "../../platform/clock";

/**
 * How long a settled outbox message (a partner delivery, a workflow run's hand-over) is kept after
 * its last attempt, and a delivery record after it was written, as public webhook APIs keep
 * theirs (Stripe: 30 days). A partner replays a failed delivery within days, once the endpoint is
 * fixed; the admin observability reads at most the last 7 days.
 */
export const DELIVERY_RETENTION_DAYS = 30;

/**
 * Deletes outbox messages that are no longer pending and whose last activity (the last attempt,
 * or the creation of one settled without any, as a hand-over whose run had ended) is older than
 * the retention, each with its delivery records in the same statement, oldest first. Pending
 * messages stay whatever their age: they are still to be sent. The candidates are locked with SKIP
 * LOCKED, which re-reads a row changed meanwhile: a delivery a partner is replaying (pending
 * again) is not deleted under the replay, and two runs side by side take different rows. Then
 * every other delivery record older than the retention (a provider's report, a workflow run's
 * deliveries, an early attempt of a message still kept, one whose message is gone), except those
 * of a pending message, which is kept whole. Returns how many messages went, and how many records
 * in the second step.
 */
export async function pruneDeliveries(db: Db, now: number, options: PruneOptions = {}): Promise<{ messages: number; records: number }> {
  const cutoff = new Date(now - (options.retentionDays ?? DELIVERY_RETENTION_DAYS) * DAY_MS).toISOString();
  // The expression and the predicate are those of outbox_settled_idx, which serves the order and the bound.
  const messages = await countedBatches(
    db,
    (limit) => sql`with settled as (
        select id from outbox_messages
        where status <> 'pending' and coalesce(last_attempt_at, created_at) < ${cutoff}::timestamptz
        order by coalesce(last_attempt_at, created_at) limit ${limit}
        for update skip locked),
      attempts as (delete from delivery_records where message_id in (select id from settled)),
      gone as (delete from outbox_messages where id in (select id from settled) returning 1)
      select count(*)::int as n from gone`,
    { batchSize: options.batchSize ?? 1_000, maxBatches: options.maxBatches ?? 100 },
  );
  // Oldest first by delivery_records_window_idx, passing over a pending message's by one
  // primary-key probe each (few: a pending message's attempts are days old, unless replayed). The
  // lateral join with its limit keeps that a probe per record: as a NOT EXISTS, the planner may
  // hash the whole outbox instead.
  const records = await deleteInBatches(
    db,
    (limit) => sql`delete from delivery_records where id = any(array(
        select r.id from delivery_records r
        left join lateral (select true as pending from outbox_messages o where o.id = r.message_id and o.status = 'pending' limit 1) m on true
        where r.occurred_at < ${cutoff}::timestamptz and m.pending is null
        order by r.occurred_at limit ${limit})) returning 1`,
    { batchSize: options.batchSize ?? 5_000, maxBatches: options.maxBatches ?? 20 },
  );
  return { messages, records };
}

/** The scheduled upkeep's step (Workers cron, Node timer): prunes, and logs what went when anything did. */
export async function pruneDeliveryLog(db: Db, now: number, logger: Pick<Logger, "info">): Promise<void> {
  const { messages, records } = await pruneDeliveries(db, now);
  if (messages > 0 || records > 0) logger.info("delivery log pruned", { messages, records });
}
