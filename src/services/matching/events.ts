import { sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import type { KeyValueStore } from "../../kv/port";
import type { Logger } from "../../platform/logger";
import { inTouchWith, notDeleted } from "../safety/visibility";
import type { Tx } from "../wallet/ledger";

/**
 * The live events of matching, through the `events` outbox table.
 *
 * Writing: an event is inserted in the same transaction as the change it reports (a match, a
 * wink), so it exists exactly when the change does. After the commit, a notification (just the
 * recipient's id) is published on `deps.kv` so that open streams, on any instance, read the
 * outbox again. The notification carries nothing: a lost one only delays delivery, the table
 * is the truth.
 *
 * Every event's `data.userId` is the other person of the event, so a block between the
 * recipient and that person can hide the event when it is read.
 */
export type EventType = "match.created" | "wink.received" | "wink.accepted";

export interface NewEvent {
  userId: string;
  type: EventType;
  data: { userId: string } & Record<string, unknown>;
}

export interface StoredEvent {
  id: number;
  type: EventType;
  data: Record<string, unknown>;
}

/** The notification channel of one person's events (the KV key prefix is applied by the store). */
export const eventChannel = (userId: string) => `matching:events:${userId}`;

// Advisory lock classes (the two-int form keeps them apart from other advisory locks).
export const PAIR_LOCK_CLASS = 7301;
const EVENT_LOCK_CLASS = 7302;

/**
 * Stores events in the caller's transaction. Ids come from a sequence, so two transactions can
 * commit their ids out of order, and a stream that already read id 6 would never see a 5 that
 * commits later. A per-recipient transaction lock, taken just before the insert and held until
 * commit, makes each person's ids commit in order; recipients are locked in a fixed order so two
 * writers cannot deadlock.
 */
export async function storeEvents(tx: Tx, events: NewEvent[], at: Date): Promise<void> {
  if (events.length === 0) return;
  const recipients = [...new Set(events.map((e) => e.userId))].sort();
  for (const userId of recipients) await tx.execute(sql`select pg_advisory_xact_lock(${EVENT_LOCK_CLASS}, hashtext(${userId}))`);
  const values = sql.join(
    events.map((e) => sql`(${e.userId}, ${e.type}, ${JSON.stringify(e.data)}::jsonb, ${at.toISOString()}::timestamptz)`),
    sql`, `,
  );
  await tx.execute(sql`insert into events (user_id, type, data, created_at) values ${values}`);
}

/** Wakes the recipients' streams after the commit. Failures are logged: the outbox still holds the events. */
export async function notify(kv: KeyValueStore, logger: Logger, events: NewEvent[]): Promise<void> {
  const recipients = [...new Set(events.map((e) => e.userId))];
  await Promise.all(
    recipients.map((userId) =>
      kv.publish(eventChannel(userId), "1").catch((err: unknown) => logger.warn("event notification failed", { userId, err: String(err) })),
    ),
  );
}

/** The newest event id of a person (0 without any): where a stream without Last-Event-ID starts. */
export async function latestEventId(db: Db, userId: string): Promise<number> {
  const [row] = await queryRows<{ id: string | null }>(db, sql`select max(id)::text as id from events where user_id = ${userId}`);
  return row?.id ? Number(row.id) : 0;
}

/** Events after `afterId`, oldest first, without those about someone a block stands between or who deleted their account. */
export async function eventsAfter(db: Db, userId: string, afterId: number, limit = 100): Promise<StoredEvent[]> {
  const rows = await queryRows<{ id: string; type: EventType; data: Record<string, unknown> | string }>(
    db,
    sql`select e.id::text as id, e.type, e.data from events e
        where e.user_id = ${userId} and e.id > ${afterId}
          and ${inTouchWith(userId, sql`(e.data->>'userId')`)}
        order by e.id limit ${limit}`,
  );
  return rows.map((r) => ({ id: Number(r.id), type: r.type, data: typeof r.data === "string" ? (JSON.parse(r.data) as Record<string, unknown>) : r.data }));
}

/**
 * The events of many people at once (the event hub's read): for each person, up to `limit` events
 * after their own cursor, oldest first, without those about someone a block stands between or who
 * deleted their account (the condition of `eventsAfter`, with the recipient taken from the row).
 * One query, one index range scan per person; the result is grouped by person.
 */
export async function eventsAfterBatch(
  db: Db,
  cursors: { userId: string; afterId: number }[],
  limit = 100,
): Promise<Map<string, StoredEvent[]>> {
  const found = new Map<string, StoredEvent[]>();
  if (cursors.length === 0) return found;
  // One jsonb parameter: drizzle would expand a JS array into a list of parameters.
  const input = JSON.stringify(cursors.map((c) => ({ user_id: c.userId, after_id: c.afterId })));
  const rows = await queryRows<{ user_id: string; id: string; type: EventType; data: Record<string, unknown> | string }>(
    db,
    sql`select c.user_id, e.id::text as id, e.type, e.data
        from jsonb_to_recordset(${input}::jsonb) as c(user_id text, after_id bigint)
        cross join lateral (
          select e.id, e.type, e.data from events e
          where e.user_id = c.user_id and e.id > c.after_id
            and not exists (select 1 from blocks b
              where (b.blocker_id = c.user_id and b.blocked_id = (e.data->>'userId'))
                 or (b.blocker_id = (e.data->>'userId') and b.blocked_id = c.user_id))
            and ${notDeleted(sql`(e.data->>'userId')`)}
          order by e.id limit ${limit}
        ) e
        order by e.id`,
  );
  for (const r of rows) {
    const event: StoredEvent = { id: Number(r.id), type: r.type, data: typeof r.data === "string" ? (JSON.parse(r.data) as Record<string, unknown>) : r.data };
    const list = found.get(r.user_id);
    if (list) list.push(event);
    else found.set(r.user_id, [event]);
  }
  return found;
}
