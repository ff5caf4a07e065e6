import { deliveryRecords } from "../../db/tables/partners";
import type { Db } from "../../db/port";
import type { IdGenerator } from "../../platform/ids";
import type { Tx } from "../wallet/ledger";

export type DeliveryChannel = "webhook" | "email" | "sms" | "push" | "in_app";

export interface DeliveryRecord {
  channel: DeliveryChannel;
  /** The path the delivery took: a webhook's host, a provider's name. */
  route: string;
  /** `sent` while no final word has come (a provider's status callback), then delivered or failed. */
  outcome: "sent" | "delivered" | "failed";
  latencyMs: number | null;
  statusCode?: number | null;
  error?: string | null;
  messageId?: string | null;
  occurredAt: number;
}

/**
 * The writer port of delivery records: every sender (the outbox's webhook sender, a messaging
 * provider's status callback) records each attempt through it, and the admin observability reads
 * the table it writes.
 */
export interface DeliveryRecordWriter {
  record(db: Db | Tx, entry: DeliveryRecord): Promise<void>;
  /** Several records in one statement (a batch of attempts). */
  recordMany(db: Db | Tx, entries: readonly DeliveryRecord[]): Promise<void>;
}

export function sqlDeliveryRecords(ids: IdGenerator): DeliveryRecordWriter {
  const row = (e: DeliveryRecord) => ({
    id: ids.next("dlv"),
    channel: e.channel,
    route: e.route,
    outcome: e.outcome,
    latencyMs: e.latencyMs,
    statusCode: e.statusCode ?? null,
    error: e.error?.slice(0, 500) ?? null,
    messageId: e.messageId ?? null,
    occurredAt: new Date(e.occurredAt),
  });
  return {
    async record(db, e) {
      await db.insert(deliveryRecords).values(row(e));
    },
    async recordMany(db, entries) {
      if (entries.length > 0) await db.insert(deliveryRecords).values(entries.map(row));
    },
  };
}
