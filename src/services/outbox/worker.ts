import { inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/port";
import { queryRows } from "../../db/rows";
import { partners } from "../../db/tables/partners";
import type { Clock } from "../../platform/clock";
import type { IdGenerator, Random } from "../../platform/ids";
import type { Logger } from "../../platform/logger";
import type { HostResolver } from "../kb/url-fetch";
import type { DeliveryRecordWriter } from "../delivery-records/records";
import type { PartnerRow } from "../partners/profile";
import { recordOutcomes, type Outcome } from "./outcomes";
import { sendWebhook, type Attempt } from "./send";
import { deliverRun } from "../workflows/handoff";

export interface OutboxWorkerDeps {
  db: Db;
  clock: Clock;
  random: Random;
  ids: IdGenerator;
  logger: Logger;
  /** Outbound HTTP for deliveries (on Node, one that re-checks each connection's address). */
  fetch: typeof fetch;
  resolver: HostResolver;
  allowedHosts?: readonly string[];
  production: boolean;
  records: DeliveryRecordWriter;
  /** Standard Webhooks asks for 15–30 s; 15 s here. */
  timeoutMs?: number;
  /** How long a claimed message stays invisible to other workers; past it, it is due again. */
  leaseMs?: number;
  /** Aborted on shutdown: attempts in flight are cut and their messages released, not counted. */
  cancel?: AbortSignal;
  /**
   * The automation engine (`engine` channel): the base of its production webhooks, and a fetch
   * without the public-only guard, as the engine is the operator's own and often on a private network.
   */
  engine?: { webhookUrl?: string; fetch: typeof fetch };
}

export type ClaimedMessage = {
  id: string;
  kind: string;
  channel: string;
  target_id: string;
  body: string;
  attempts: number;
};

export const DEFAULT_LEASE_MS = 60_000;

/**
 * Claims due messages: locks them with SKIP LOCKED (so concurrent workers take different rows)
 * and pushes their next attempt a lease ahead, in one statement. Nothing is held open while
 * sending; a worker that dies leaves its rows to come due again when the lease ends. With `only`,
 * just those ids, if they are due (a queue consumer handed their ids).
 */
export async function claimDue(d: OutboxWorkerDeps, limit: number, only?: readonly string[]): Promise<ClaimedMessage[]> {
  if (only?.length === 0) return [];
  const now = d.clock.now();
  const leaseUntil = new Date(now + (d.leaseMs ?? DEFAULT_LEASE_MS)).toISOString();
  const filter = only ? sql`and id = any(${`{${only.join(",")}}`}::text[])` : sql``;
  return queryRows<ClaimedMessage>(
    d.db,
    sql`update outbox_messages o set next_attempt_at = ${leaseUntil}::timestamptz
        from (select id from outbox_messages
              where status = 'pending' and next_attempt_at <= ${new Date(now).toISOString()}::timestamptz ${filter}
              order by next_attempt_at limit ${limit} for update skip locked) due
        where o.id = due.id
        returning o.id, o.kind, o.channel, o.target_id, o.body, o.attempts`,
  );
}

/** The partners of a batch's messages, in one query. */
export async function partnersOf(d: OutboxWorkerDeps, claimed: readonly ClaimedMessage[]): Promise<Map<string, PartnerRow>> {
  const targets = [...new Set(claimed.filter((m) => m.channel === "webhook").map((m) => m.target_id))];
  if (targets.length === 0) return new Map();
  const rows = await d.db.select().from(partners).where(inArray(partners.id, targets));
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Sends claimed messages side by side and records their outcomes together. A message whose send
 * threw (a bug, not the endpoint) is logged and left to its lease, which makes it due again.
 */
export async function deliverClaimed(d: OutboxWorkerDeps, claimed: readonly ClaimedMessage[]): Promise<Outcome[]> {
  if (claimed.length === 0) return [];
  const rows = await partnersOf(d, claimed);
  const sent: { msg: ClaimedMessage; attempt: Attempt }[] = [];
  await Promise.all(
    claimed.map(async (msg) => {
      if (msg.channel !== "webhook" && msg.channel !== "engine") {
        d.logger.error("outbox message of a channel without a sender", { messageId: msg.id, channel: msg.channel });
        return;
      }
      try {
        // A workflow run's hand-over records its own outcome, with the run's state, in one transaction.
        if (msg.channel === "engine") await deliverRun(d, msg);
        else sent.push({ msg, attempt: await sendWebhook(d, msg, rows.get(msg.target_id)) });
      } catch (err) {
        d.logger.error("outbox delivery failed", { messageId: msg.id, error: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
  return recordOutcomes(d, sent);
}

/** One pass: claims up to `limit` due messages (or just `only`), sends them and records the outcomes. */
export async function deliverDue(d: OutboxWorkerDeps, limit = 100, only?: readonly string[]): Promise<number> {
  const claimed = await claimDue(d, limit, only);
  await deliverClaimed(d, claimed);
  return claimed.length;
}
